package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.StaleTokenException;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RedisFencedValues} on a real redis-server, with tokens from real leases of the
 * Redis store.
 */
@Tag("server")
class RedisFencedValuesTests {

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static RedisLockProvider provider;

	private static RenewalScheduler scheduler;

	private static DefaultLockTemplate locks;

	private static RedisFencedValues values;

	private final String key = "fenced:" + UUID.randomUUID();

	@BeforeAll
	static void start() {
		server = RedisServer.start();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		provider = new RedisLockProvider(factory, "lock:", false);
		scheduler = new RenewalScheduler();
		locks = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(30))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(false)
					.retryInterval(Duration.ofMillis(20))
					.build());
		values = new RedisFencedValues(factory);
	}

	@AfterAll
	static void stop() {
		values.close();
		locks.close();
		scheduler.close();
		provider.close();
		factory.destroy();
		server.close();
	}

	@Test
	void aPausedHoldersWriteAfterANewerHoldersIsRefused() {
		String lock = "fence:" + UUID.randomUUID();
		Lease paused = locks.acquire(lock,
				LockOptions.builder().leaseTime(Duration.ofMillis(200)).autoRenew(false).build());
		// Waits until the paused holder's lease has run out, then takes the lock.
		Lease newer = locks.acquire(lock, LockOptions.defaults());
		assertThat(newer.fencingToken()).isGreaterThan(paused.fencingToken());
		values.set(this.key, "newer", newer.fencingToken());
		assertThatExceptionOfType(StaleTokenException.class)
			.isThrownBy(() -> values.set(this.key, "paused", paused.fencingToken()))
			.satisfies((ex) -> {
				assertThat(ex.getResource()).isEqualTo(this.key);
				assertThat(ex.getToken()).isEqualTo(paused.fencingToken());
				assertThat(ex.getHighestToken()).isEqualTo(newer.fencingToken());
			});
		assertThatExceptionOfType(StaleTokenException.class)
			.isThrownBy(() -> values.compareAndSet(this.key, "newer", "paused", paused.fencingToken()));
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("newer", newer.fencingToken()));
		newer.release();
	}

	@Test
	void theSameTokenIsAcceptedTwice() {
		long token = tokens(1)[0];
		values.set(this.key, "first", token);
		values.set(this.key, "second", token);
		assertThat(values.compareAndSet(this.key, "second", "third", token)).isTrue();
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("third", token));
	}

	@Test
	void compareAndSetWritesOnlyOverTheExpectedValue() {
		long[] tokens = tokens(3);
		assertThat(values.compareAndSet(this.key, null, "created", tokens[0])).isTrue();
		assertThat(values.compareAndSet(this.key, null, "again", tokens[1])).isFalse();
		assertThat(values.compareAndSet(this.key, "other", "changed", tokens[2])).isFalse();
		// a failed comparison changes nothing, not even the highest token
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("created", tokens[0]));
		assertThat(values.compareAndSet(this.key, "created", "changed", tokens[1])).isTrue();
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("changed", tokens[1]));
	}

	@Test
	void tokensCompareExactlyBeyondTheDoublesPrecision() {
		long big = (1L << 53) + 1;
		values.set(this.key, "newer", big);
		assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> values.set(this.key, "older", big - 1));
		assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> values.set(this.key, "short", 9));
		values.set(this.key, "max", Long.MAX_VALUE);
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("max", Long.MAX_VALUE));
	}

	@Test
	void anAbsentKeyHasNoValueAndAnUnfencedOneHasTokenZero() {
		assertThat(values.get(this.key)).isNull();
		server.command("HSET", this.key, "value", "raw");
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("raw", 0));
		values.set(this.key, "fenced", 7);
		server.command("HSET", this.key, "mine", "kept");
		values.set(this.key, "again", 8);
		assertThat(server.command("HGET", this.key, "mine")).isEqualTo("kept");
	}

	@Test
	void concurrentHoldersNeverLetAnOlderTokenOverwriteANewerOne() throws Exception {
		int writers = 16;
		long[] tokens = tokens(writers);
		List<Long> shuffled = new ArrayList<>();
		for (long token : tokens) {
			shuffled.add(token);
		}
		Collections.shuffle(shuffled);
		ConcurrentLinkedQueue<Long> accepted = new ConcurrentLinkedQueue<>();
		ConcurrentLinkedQueue<StaleTokenException> refused = new ConcurrentLinkedQueue<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(writers);
		try {
			List<CompletableFuture<Void>> runs = new ArrayList<>();
			for (long token : shuffled) {
				runs.add(CompletableFuture.runAsync(() -> {
					await(start);
					try {
						values.set(this.key, "v" + token, token);
						accepted.add(token);
					}
					catch (StaleTokenException ex) {
						refused.add(ex);
					}
				}, threads));
			}
			start.countDown();
			CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		}
		finally {
			threads.shutdownNow();
		}
		long highest = tokens[writers - 1];
		assertThat(values.get(this.key)).isEqualTo(new FencedValue("v" + highest, highest));
		assertThat(accepted).contains(highest);
		assertThat(accepted.size() + refused.size()).isEqualTo(writers);
		assertThat(refused).allSatisfy((ex) -> {
			assertThat(ex.getToken()).isLessThan(ex.getHighestToken());
			assertThat(ex.getHighestToken()).isLessThanOrEqualTo(highest);
		});
	}

	/** The tokens of {@code count} leases taken one after another, rising. */
	private static long[] tokens(int count) {
		String lock = "fence:" + UUID.randomUUID();
		long[] tokens = new long[count];
		for (int i = 0; i < count; i++) {
			Lease lease = locks.acquire(lock, LockOptions.defaults());
			tokens[i] = lease.fencingToken();
			lease.release();
		}
		return tokens;
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Timed out waiting for the start");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
