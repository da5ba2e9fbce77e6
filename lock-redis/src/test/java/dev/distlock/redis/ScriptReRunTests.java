package dev.distlock.redis;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The acquire scripts run twice with the same arguments, as they run when a client
 * re-sends a call whose reply a broken connection swallowed (Lettuce does). The second
 * run must answer as the first did, not as a competitor would: the caller only ever sees
 * the second answer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ScriptReRunTests {

	private static final String LEASE_MILLIS = "30000";

	private static final String QUEUE_TIMEOUT_MILLIS = "1000";

	private static final RedisKeys keys = new RedisKeys("lock:", false);

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		server.close();
	}

	/** The plain acquire, for comparison: the second run returns the first's token. */
	@Test
	void anAcquireRunTwiceReturnsTheSameToken() {
		String lockKey = lockKey();
		long first = redis.execute(LockScripts.ACQUIRE, List.of(lockKey, keys.fenceKey(lockKey)), "owner-a",
				LEASE_MILLIS, "0");
		long second = redis.execute(LockScripts.ACQUIRE, List.of(lockKey, keys.fenceKey(lockKey)), "owner-a",
				LEASE_MILLIS, "0");
		assertThat(first).isPositive();
		assertThat(second).as("second run").isEqualTo(first);
	}

	/**
	 * An acquire that reserved a block, run twice: the second run cannot tell whether the
	 * first got its block, so it answers with the token and no block (a grant below
	 * {@code -NO_BLOCK}). Fails if it claims the block, which a counter found ahead by
	 * the first run would not have reserved.
	 */
	@Test
	void aBlockAcquireRunTwiceReturnsTheSameTokenWithoutTheBlock() {
		String lockKey = lockKey();
		long first = redis.execute(LockScripts.ACQUIRE, List.of(lockKey, keys.fenceKey(lockKey)), "owner-b",
				LEASE_MILLIS, "0", "33");
		long second = redis.execute(LockScripts.ACQUIRE, List.of(lockKey, keys.fenceKey(lockKey)), "owner-b",
				LEASE_MILLIS, "0", "33");
		assertThat(LockScripts.grantedToken(first)).isPositive();
		assertThat(second).as("second run").isLessThan(-LockScripts.NO_BLOCK);
		assertThat(LockScripts.grantedToken(second)).isEqualTo(LockScripts.grantedToken(first));
		assertThat(LockScripts.grantedLastToken(second, 33)).isEqualTo(LockScripts.grantedToken(first));
	}

	/**
	 * A fair acquire of a free lock with nobody queued, run twice. Fails if the second
	 * run reports the lock busy, or queues the waiter behind its own lock.
	 */
	@Test
	void aFairAcquireRunTwiceReturnsTheSameTokenAndQueuesNobody() {
		String lockKey = lockKey();
		long first = fairAcquire(lockKey, "owner-a", "waiter-a");
		long second = fairAcquire(lockKey, "owner-a", "waiter-a");
		assertThat(first).isPositive();
		assertThat(second).as("second run").isEqualTo(first);
		assertThat(redis.hasKey(keys.queueKey(lockKey))).as("queue").isFalse();
		assertThat(redis.hasKey(keys.waiterDeadlinesKey(lockKey))).as("waiter deadlines").isFalse();
		assertThat(TestRedis.mutexOwner(redis, lockKey)).isEqualTo("owner-a");
	}

	/**
	 * The head of a queue takes the lock when it is released, and that acquire runs
	 * twice. Fails if the second run reports the lock busy or puts the waiter back in the
	 * queue; the waiter behind keeps its place.
	 */
	@Test
	void aFairAcquireByTheHeadOfTheQueueRunTwiceReturnsTheSameTokenAndLeavesTheQueueAlone() {
		String lockKey = lockKey();
		assertThat(fairAcquire(lockKey, "holder", "waiter-h")).isPositive();
		assertThat(fairAcquire(lockKey, "owner-a1", "waiter-a")).as("first in the queue").isNegative();
		assertThat(fairAcquire(lockKey, "owner-b1", "waiter-b")).as("second in the queue").isNegative();
		redis.delete(lockKey);
		long first = fairAcquire(lockKey, "owner-a2", "waiter-a");
		long second = fairAcquire(lockKey, "owner-a2", "waiter-a");
		assertThat(first).isPositive();
		assertThat(second).as("second run").isEqualTo(first);
		assertThat(redis.opsForZSet().range(keys.queueKey(lockKey), 0, -1)).as("queue").containsExactly("waiter-b");
		assertThat(redis.opsForHash().keys(keys.waiterDeadlinesKey(lockKey))).as("waiter deadlines")
			.containsExactly("waiter-b");
		assertThat(TestRedis.mutexOwner(redis, lockKey)).isEqualTo("owner-a2");
	}

	/**
	 * Leaving the queue twice takes out the leaver only. (A second run may publish a
	 * second release signal, which only makes a waiter ask once more.)
	 */
	@Test
	void leavingTheQueueTwiceLeavesTheOthersInPlace() {
		String lockKey = lockKey();
		assertThat(fairAcquire(lockKey, "holder", "waiter-h")).isPositive();
		assertThat(fairAcquire(lockKey, "owner-a", "waiter-a")).isNegative();
		assertThat(fairAcquire(lockKey, "owner-b", "waiter-b")).isNegative();
		for (int run = 0; run < 2; run++) {
			redis.execute(LockScripts.LEAVE_QUEUE,
					List.of(lockKey, keys.queueKey(lockKey), keys.waiterDeadlinesKey(lockKey), keys.fenceKey(lockKey)),
					"waiter-a", keys.releaseChannel(), "0", "owner-a");
		}
		assertThat(redis.opsForZSet().range(keys.queueKey(lockKey), 0, -1)).as("queue").containsExactly("waiter-b");
		assertThat(redis.opsForHash().keys(keys.waiterDeadlinesKey(lockKey))).as("waiter deadlines")
			.containsExactly("waiter-b");
	}

	private static long fairAcquire(String lockKey, String owner, String waiter) {
		return redis.execute(LockScripts.FAIR_ACQUIRE,
				List.of(lockKey, keys.fenceKey(lockKey), keys.queueKey(lockKey), keys.waiterDeadlinesKey(lockKey)),
				owner, LEASE_MILLIS, waiter, QUEUE_TIMEOUT_MILLIS);
	}

	private static String lockKey() {
		return keys.lockKey("re-run-" + UUID.randomUUID());
	}

}
