package dev.distlock.fuzz;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.redis.RedisProviderFactory;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.ChildJvm;
import dev.distlock.testsupport.RedisServer;
import dev.distlock.testsupport.WorkerArgs;
import dev.distlock.testsupport.fuzz.LockHolder;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A holder that dies without releasing (SIGKILL: no shutdown hook, no release) frees the
 * lock when its lease runs out, and not before; the next holder gets a greater fencing
 * token.
 */
class HolderKilledTests {

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final String KEY = "killed-holder";

	@Test
	void lockOfAKilledHolderIsFreeWithinItsLeaseAndTheNextTokenIsGreater() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(redis.port());
			RenewalScheduler scheduler = new RenewalScheduler();
			try (ChildJvm holder = ChildJvm.start(LockHolder.class, holderSettings(redis))) {
				StringRedisTemplate store = new StringRedisTemplate(connectionFactory);
				DefaultLockTemplate contender = TestRedis.template(connectionFactory, scheduler);
				long heldToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				// The holder renews (it is the only client running scripts so far), so
				// only the kill can free it.
				long scriptsSoFar = TestRedis.scriptCalls(store);
				await().atMost(LEASE).until(() -> TestRedis.scriptCalls(store) > scriptsSoFar);
				assertThat(ttlMillis(store)).isPositive();
				assertThat(contender.tryAcquire(KEY, options(Duration.ZERO))).isEmpty();

				holder.kill();
				long killedAt = System.nanoTime();
				assertThat(contender.tryAcquire(KEY, options(Duration.ZERO)))
					.as("lock freed at once by a killed holder: it must outlive the crash until its lease runs out")
					.isEmpty();
				Duration bound = LEASE.plusSeconds(1);
				Optional<Lease> next = contender.tryAcquire(KEY, options(bound));
				long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
				assertThat(next).as("lock acquired within %s of the kill", bound).isPresent();
				try (Lease lease = next.get()) {
					assertThat(freedAfterMillis).isLessThanOrEqualTo(bound.toMillis());
					assertThat(lease.fencingToken()).isGreaterThan(heldToken);
				}
			}
			finally {
				scheduler.close();
				connectionFactory.destroy();
			}
		}
	}

	/** The Redis store and the lock to hold, for {@link LockHolder}. */
	private static Map<String, String> holderSettings(RedisServer redis) {
		Map<String, String> settings = new LinkedHashMap<>(RedisProviderFactory.settings(redis.port()));
		settings.put(WorkerArgs.PROVIDER, RedisProviderFactory.class.getName());
		settings.put(LockHolder.KEY, KEY);
		settings.put(LockHolder.LEASE_MILLIS, String.valueOf(LEASE.toMillis()));
		return settings;
	}

	private static long ttlMillis(StringRedisTemplate store) {
		Long ttl = store.getExpire(TestRedis.PREFIX + KEY, TimeUnit.MILLISECONDS);
		return (ttl != null) ? ttl : -2;
	}

	private static LockOptions options(Duration waitTime) {
		return LockOptions.builder().waitTime(waitTime).leaseTime(LEASE).autoRenew(true).build();
	}

}
