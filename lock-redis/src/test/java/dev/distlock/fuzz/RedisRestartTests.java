package dev.distlock.fuzz;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Redis killed ({@code kill -9}) and restarted while a lock is held. With an fsync'ed
 * append-only file the lock survives and still excludes others; without persistence the
 * lock is gone, the holder learns that it lost it, and the next holder's fencing token is
 * still greater (the token has a clock floor).
 */
@Tag("server")
class RedisRestartTests {

	private static final String KEY = "restarted";

	private RedisServer redis;

	private RedisServer restarted;

	private LettuceConnectionFactory connectionFactory;

	private RenewalScheduler scheduler;

	@AfterEach
	void stop() {
		if (this.scheduler != null) {
			this.scheduler.close();
		}
		if (this.connectionFactory != null) {
			this.connectionFactory.destroy();
		}
		if (this.restarted != null) {
			this.restarted.close();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void withAppendOnlyFileTheLockSurvivesARestartAndStillExcludesOthers() {
		start("--appendonly", "yes", "--appendfsync", "always");
		Duration lease = Duration.ofSeconds(5);
		Lease held = client().acquire(KEY, options(Duration.ZERO, lease));
		this.redis.kill();
		this.restarted = this.redis.restart();
		StringRedisTemplate store = new StringRedisTemplate(this.connectionFactory);
		Long ttl = store.getExpire(TestRedis.PREFIX + KEY, TimeUnit.MILLISECONDS);
		assertThat(ttl).isPositive().isLessThanOrEqualTo(lease.toMillis());
		DefaultLockTemplate other = client();
		assertThat(other.tryAcquire(KEY, options(Duration.ZERO, lease))).isEmpty();
		assertThat(held.isHeld()).isTrue();
		held.release();
		assertThat(store.hasKey(TestRedis.PREFIX + KEY)).isFalse();
		try (Lease next = other.acquire(KEY, options(Duration.ZERO, lease))) {
			assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
		}
	}

	@Test
	void withoutPersistenceTheHolderLearnsItLostTheLockAndTheNextTokenIsStillGreater() {
		start();
		Duration lease = Duration.ofSeconds(2);
		Lease old = client().acquire(KEY, options(Duration.ZERO, lease));
		this.redis.kill();
		this.restarted = this.redis.restart();
		StringRedisTemplate store = new StringRedisTemplate(this.connectionFactory);
		assertThat(store.hasKey(TestRedis.PREFIX + KEY)).isFalse();
		try (Lease next = client().acquire(KEY, options(Duration.ofSeconds(5), lease))) {
			assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
			await().atMost(lease.plusSeconds(1)).until(() -> !old.isHeld());
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(old::release);
			assertThat(store.hasKey(TestRedis.PREFIX + KEY)).isTrue();
			assertThat(next.isHeld()).isTrue();
		}
	}

	private void start(String... args) {
		this.redis = RedisServer.start(args);
		this.connectionFactory = TestRedis.connectionFactory(this.redis.port());
		this.scheduler = new RenewalScheduler();
	}

	/**
	 * A client with its own provider (its own owner identity), as another JVM would have.
	 */
	private DefaultLockTemplate client() {
		return TestRedis.template(this.connectionFactory, this.scheduler);
	}

	private static LockOptions options(Duration waitTime, Duration leaseTime) {
		return LockOptions.builder().waitTime(waitTime).leaseTime(leaseTime).autoRenew(true).build();
	}

}
