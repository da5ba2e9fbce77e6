package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fencing tokens do not cost memory per lock name: after many distinct keys have each
 * been locked and released once, the only key left is the one fencing counter, and every
 * token was greater than the one before. The default suite locks 10,000 keys; the
 * {@code soak} profile ({@code -Psoak}) locks 1,000,000.
 */
@Tag("server")
class FencingMemoryTests {

	private static final int KEYS = Integer.getInteger("distlock.fencing.keys", 10_000);

	private static final int THREADS = 4;

	@Test
	void lockingManyDistinctKeysLeavesOnlyTheFencingCounterBehind() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory factory = TestRedis.connectionFactory(server);
			ExecutorService threads = Executors.newFixedThreadPool(THREADS);
			try {
				StringRedisTemplate redis = new StringRedisTemplate(factory);
				long memoryBefore = usedMemory(redis);
				RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
				long started = System.nanoTime();
				List<Future<Long>> workers = new ArrayList<>();
				for (int t = 0; t < THREADS; t++) {
					int first = t;
					workers.add(threads.submit(() -> lockEach(provider, first)));
				}
				long disordered = 0;
				for (Future<Long> worker : workers) {
					disordered += worker.get(10, TimeUnit.MINUTES);
				}
				long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
				Long keysLeft = redis
					.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().dbSize());
				List<String> names = new ArrayList<>(redis.keys("*"));
				long memoryAfter = usedMemory(redis);
				System.out.printf(
						"Fencing memory: %,d distinct keys locked once each in %d s; keys left %d %s;"
								+ " used_memory %,d -> %,d bytes%n",
						KEYS, seconds, keysLeft, names, memoryBefore, memoryAfter);
				assertThat(disordered).as("tokens not greater than the thread's previous token").isZero();
				assertThat(keysLeft).as("keys left after %d distinct locks", KEYS).isEqualTo(1);
				assertThat(names).allMatch((name) -> name.startsWith("lock:") && !name.contains("key-"));
			}
			finally {
				threads.shutdownNow();
				factory.destroy();
			}
		}
	}

	/**
	 * Locks and releases every THREADS-th key from {@code first}; returns how often a
	 * token failed to rise.
	 */
	private static long lockEach(RedisLockProvider provider, int first) {
		long previous = 0;
		long disordered = 0;
		for (int i = first; i < KEYS; i += THREADS) {
			LockAttempt attempt = LockAttempt
				.join(provider.tryLock(LockRequest.exclusive("key-" + i, Duration.ofSeconds(30))));
			if (!(attempt instanceof LockAttempt.Acquired acquired)) {
				throw new AssertionError("key-" + i + " was not free: " + attempt);
			}
			long token = acquired.handle().fencingToken();
			disordered += (token > previous) ? 0 : 1;
			previous = token;
			if (!acquired.handle().release()) {
				throw new AssertionError("key-" + i + " was not released");
			}
		}
		return disordered;
	}

	private static long usedMemory(StringRedisTemplate redis) {
		Properties memory = redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("memory"));
		return Long.parseLong(memory.getProperty("used_memory"));
	}

}
