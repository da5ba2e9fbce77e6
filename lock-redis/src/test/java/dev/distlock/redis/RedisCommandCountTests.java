package dev.distlock.redis;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the mutex format costs Redis, counted (not timed) from {@code INFO commandstats},
 * which counts the commands run inside scripts as well as the client's own; and how the
 * format copes with what else may live at a lock key.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class RedisCommandCountTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	/** The client's own commands: the scripts. */
	private static final Set<String> CLIENT = Set.of("evalsha", "eval", "script");

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	private static RedisLockProvider provider;

	private static RedisLockProvider otherProvider;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		otherFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
		provider = new RedisLockProvider(factory, TestRedis.PREFIX, false);
		otherProvider = new RedisLockProvider(otherFactory, TestRedis.PREFIX, false);
		TestRedis.awaitAnswers(provider);
		TestRedis.awaitAnswers(otherProvider);
		// The script cache is warm from here on.
		LockHandle warm = acquired(
				LockAttempt.join(provider.tryLock(LockRequest.exclusive("warm-" + UUID.randomUUID(), LEASE))));
		warm.release();
	}

	@AfterAll
	static void stopRedis() {
		provider.close();
		otherProvider.close();
		factory.destroy();
		otherFactory.destroy();
		server.close();
	}

	/**
	 * An uncontended cycle (acquire, release) runs at most five commands inside its
	 * scripts ({@code TIME}, {@code SET ... GET} of the counter, {@code SET NX PX},
	 * {@code GET}, {@code DEL}), and the client sends two.
	 */
	@Test
	void anUncontendedCycleRunsAtMostFiveCommandsInsideItsScripts() {
		int cycles = 200;
		Map<String, Long> before = TestRedis.commandCalls(redis);
		for (int i = 0; i < cycles; i++) {
			LockHandle handle = acquired(
					LockAttempt.join(provider.tryLock(LockRequest.exclusive("cycle-" + i, LEASE))));
			assertThat(handle.release()).isTrue();
		}
		Map<String, Long> calls = since(before);
		long client = client(calls);
		long inside = inside(calls);
		System.out.printf("Uncontended cycle: %.2f client commands, %.2f commands inside scripts (%s)%n",
				client / (double) cycles, inside / (double) cycles, calls);
		assertThat(client).as("client commands").isEqualTo(2L * cycles);
		assertThat(inside).as("commands inside the scripts, " + calls).isLessThanOrEqualTo(5L * cycles);
	}

	/**
	 * A contended cross-provider episode (holder acquires, waiter finds it busy and marks
	 * it, holder releases and signals, waiter acquires and releases) sends five client
	 * commands.
	 */
	@Test
	void aContendedEpisodeSendsAtMostFiveClientCommands() {
		String key = "episode-" + UUID.randomUUID();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		LockHandle holder = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		assertThat(LockAttempt.join(otherProvider.tryLock(LockRequest.exclusive(key, LEASE).withWaiting(true))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(TestRedis.mutexWaited(redis.opsForValue().get(TestRedis.PREFIX + key))).as("marked").isTrue();
		assertThat(holder.release()).isTrue();
		LockHandle waiter = acquired(
				LockAttempt.join(otherProvider.tryLock(LockRequest.exclusive(key, LEASE).withWaiting(true))));
		assertThat(waiter.release()).isTrue();
		Map<String, Long> calls = since(before);
		System.out.printf("Contended episode: %d client commands, %d commands inside scripts (%s)%n", client(calls),
				inside(calls), calls);
		assertThat(client(calls)).as("client commands, " + calls).isLessThanOrEqualTo(5);
		assertThat(calls).as("the marked release signalled").containsEntry("publish", 1L);
	}

	/**
	 * A key of another type at the lock key (a read-write lock's readers, a hash) is
	 * busy, for a plain and a waiting attempt alike, and is never renewed or deleted as
	 * if it were a mutex.
	 */
	@Test
	void aKeyOfAnotherTypeIsBusyAndNeverTouched() {
		String key = "typed-" + UUID.randomUUID();
		String lockKey = TestRedis.PREFIX + key;
		redis.opsForHash().put(lockKey, "reader", "1");
		redis.expire(lockKey, Duration.ofSeconds(30));
		assertThat(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		LockAttempt waiting = LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE).withWaiting(true)));
		assertThat(waiting).isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) waiting).remaining()).isPositive();
		RedisLockHandle stranger = provider.handle(key, lockKey, "reader", 1);
		assertThat(stranger.renew(Duration.ofMillis(5))).as("renewed").isFalse();
		assertThat(stranger.release()).as("released").isFalse();
		assertThat(redis.opsForHash().entries(lockKey)).containsOnlyKeys("reader");
		assertThat(redis.getExpire(lockKey)).isGreaterThan(1);
	}

	/**
	 * Owners are compared whole: an owner that is a prefix of the holder's owner token
	 * neither renews nor deletes its lock.
	 */
	@Test
	void anOwnerThatIsAPrefixOfTheHoldersIsNotTheHolder() {
		String key = "prefix-" + UUID.randomUUID();
		String lockKey = TestRedis.PREFIX + key;
		LockHandle holder = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		String owner = TestRedis.mutexOwner(redis, lockKey);
		assertThat(owner).isNotNull();
		RedisLockHandle prefix = provider.handle(key, lockKey, owner.substring(0, owner.length() - 1), 1);
		assertThat(prefix.renew(Duration.ofMillis(5))).as("renewed").isFalse();
		assertThat(prefix.release()).as("released").isFalse();
		assertThat(redis.getExpire(lockKey)).isGreaterThan(1);
		assertThat(holder.release()).isTrue();
	}

	/**
	 * A counter ahead of the server's clock (a clock stepped back, or tokens issued
	 * faster than one per microsecond) goes on from itself: tokens still rise strictly.
	 */
	@Test
	void tokensRiseStrictlyFromACounterAheadOfTheClock() {
		long ahead = 9_000_000_000_000_000L;
		redis.opsForValue().set(TestRedis.PREFIX, Long.toString(ahead));
		String key = "ahead-" + UUID.randomUUID();
		LockHandle first = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		first.release();
		LockHandle second = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		second.release();
		assertThat(first.fencingToken()).isGreaterThan(ahead);
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		redis.delete(TestRedis.PREFIX);
	}

	private static Map<String, Long> since(Map<String, Long> before) {
		Map<String, Long> calls = new TreeMap<>();
		TestRedis.commandCalls(redis).forEach((command, count) -> {
			long delta = count - before.getOrDefault(command, 0L);
			if (delta > 0) {
				calls.put(command, delta);
			}
		});
		// Our own INFO and the background connection's handshake and subscription.
		calls.keySet().removeAll(Set.of("info", "hello", "client", "subscribe", "ssubscribe", "ping"));
		return calls;
	}

	private static long client(Map<String, Long> calls) {
		return calls.entrySet()
			.stream()
			.filter((entry) -> CLIENT.contains(entry.getKey()))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	private static long inside(Map<String, Long> calls) {
		return calls.entrySet()
			.stream()
			.filter((entry) -> !CLIENT.contains(entry.getKey()))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
