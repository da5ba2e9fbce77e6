package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Grant on release: a fair lock's release hands the lock to the first queued waiter in
 * Redis and tells it, and the waiter holds the lock without another acquire. Each
 * provider stands for an application instance of its own (its own owner identity and
 * release subscription).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class FairGrantTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration QUEUE_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration WAIT = Duration.ofSeconds(10);

	/** The lease of a waiter that pauses past it. */
	private static final Duration SHORT_LEASE = Duration.ofMillis(300);

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	private final List<RedisLockProvider> providers = new ArrayList<>();

	private final List<ReleaseSignals.Subscription> subscriptions = new ArrayList<>();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
		// Script calls are counted: every script is in Redis' cache from here on, so none
		// is sent twice (NOSCRIPT, then EVAL).
		RedisLockProvider warm = new RedisLockProvider(factory, TestRedis.PREFIX, false);
		LockHandle handle = acquired(
				LockAttempt.join(warm.tryLock(LockRequest.fair("warm", LEASE, "warm", QUEUE_TIMEOUT))));
		assertThat(handle.renew(LEASE)).isTrue();
		assertThat(handle.release()).isTrue();
		warm.close();
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		server.close();
	}

	@AfterEach
	void closeProviders() {
		this.subscriptions.forEach(ReleaseSignals.Subscription::close);
		this.providers.forEach(RedisLockProvider::close);
	}

	/**
	 * Three waiters queue behind a holder; each release grants the lock to the next in
	 * arrival order, wakes only that one, and the woken waiter holds it without waiting
	 * for Redis (its one script call, the extension of the grant to the lease, is sent
	 * and not waited for), its token greater than the last holder's.
	 */
	@Test
	void releasesGrantTheLockInQueueOrderWithoutAnotherAcquire() {
		String key = key();
		RedisLockProvider holderProvider = provider();
		List<RedisLockProvider> waiters = List.of(provider(), provider(), provider());
		List<Wakes> woken = new ArrayList<>();
		for (RedisLockProvider waiter : waiters) {
			woken.add(listen(waiter, key));
		}
		LockHandle holder = acquired(
				LockAttempt.join(holderProvider.tryLock(LockRequest.fair(key, LEASE, "holder", QUEUE_TIMEOUT))));
		for (int i = 0; i < waiters.size(); i++) {
			assertThat(LockAttempt
				.join(waiters.get(i).tryLock(LockRequest.fair(key, LEASE, "waiter-" + i, QUEUE_TIMEOUT))))
				.as("waiter %d queues", i)
				.isInstanceOf(LockAttempt.Busy.class);
		}
		for (int i = 0; i < waiters.size(); i++) {
			long scriptsBefore = TestRedis.scriptCalls(redis);
			assertThat(holder.release()).isTrue();
			await(woken.get(i), "waiter " + i + " is told of its grant");
			LockHandle next = acquired(LockAttempt
				.join(waiters.get(i).tryLock(LockRequest.fair(key, LEASE, "waiter-" + i, QUEUE_TIMEOUT))));
			assertScriptCalls(scriptsBefore, 2, "the release, and the grant's extension to the lease");
			assertThat(next.fencingToken()).as("token of waiter %d", i).isGreaterThan(holder.fencingToken());
			assertThat(TestRedis.mutexFence(redis, TestRedis.PREFIX + key))
				.isEqualTo(Long.toString(next.fencingToken()));
			for (int later = i + 1; later < waiters.size(); later++) {
				assertThat(woken.get(later).woken()).as("waiter %d woken before its turn", later).isFalse();
			}
			assertThat(waiters.get(i).fairWaits()).as("waits left in waiter %d's provider", i).isZero();
			holder = next;
		}
		assertThat(holder.release()).isTrue();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	/**
	 * A fair cross-instance episode (acquire, queued attempt, release with grant, the
	 * grant's extension to the lease, sent and not waited for, release) sends five client
	 * commands.
	 */
	@Test
	void aFairEpisodeSendsFiveClientCommandsAndWaitsForFour() {
		String key = key();
		RedisLockProvider holderProvider = provider();
		RedisLockProvider waiter = provider();
		Wakes woken = listen(waiter, key);
		Map<String, Long> before = TestRedis.commandCalls(redis);
		LockHandle holder = acquired(
				LockAttempt.join(holderProvider.tryLock(LockRequest.fair(key, LEASE, "holder", QUEUE_TIMEOUT))));
		assertThat(LockAttempt.join(waiter.tryLock(LockRequest.fair(key, LEASE, "waiter", QUEUE_TIMEOUT))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(holder.release()).isTrue();
		await(woken, "the waiter is told of its grant");
		assertThat(acquired(LockAttempt.join(waiter.tryLock(LockRequest.fair(key, LEASE, "waiter", QUEUE_TIMEOUT))))
			.release()).isTrue();
		Map<String, Long> after = TestRedis.commandCalls(redis);
		long scripts = after.getOrDefault("evalsha", 0L) - before.getOrDefault("evalsha", 0L);
		System.out.printf("Fair episode with grant: %d client commands%n", scripts);
		assertThat(scripts).isEqualTo(5);
	}

	/**
	 * A waiter told of its grant that does not come back for it within half its lease
	 * (paused) asks Redis instead of taking it: the lease ran out, another waiter took
	 * the lock with a greater token, and the paused one is busy.
	 */
	@Test
	void aGrantedWaiterPausedPastItsLeaseDoesNotHoldTheLock() {
		String key = key();
		String lockKey = TestRedis.PREFIX + key;
		Queue queue = grantedToAPausedWaiter(key);
		RedisLockProvider paused = queue.first();
		RedisLockProvider next = queue.second();
		long granted = Long.parseLong(TestRedis.mutexFence(redis, lockKey));
		Conditions.await("the granted lease runs out", WAIT, () -> !redis.hasKey(lockKey));
		LockHandle taken = acquired(
				LockAttempt.join(next.tryLock(LockRequest.fair(key, LEASE, "next", QUEUE_TIMEOUT))));
		assertThat(taken.fencingToken()).isGreaterThan(granted);
		assertThat(LockAttempt.join(paused.tryLock(LockRequest.fair(key, SHORT_LEASE, "paused", QUEUE_TIMEOUT))))
			.as("the paused waiter's attempt")
			.isInstanceOf(LockAttempt.Busy.class);
		paused.withdraw(LockRequest.fair(key, LEASE, "paused", QUEUE_TIMEOUT));
		assertThat(taken.release()).isTrue();
	}

	/**
	 * A waiter that took its grant and then paused past its lease is fenced out: the next
	 * holder's token is greater, and the paused holder can neither renew nor delete the
	 * next holder's lock.
	 */
	@Test
	void aGrantedHolderPausedPastItsLeaseIsFencedOut() {
		String key = key();
		String lockKey = TestRedis.PREFIX + key;
		Queue queue = grantedToAPausedWaiter(key);
		RedisLockProvider paused = queue.first();
		RedisLockProvider next = queue.second();
		LockHandle stale = acquired(
				LockAttempt.join(paused.tryLock(LockRequest.fair(key, SHORT_LEASE, "paused", QUEUE_TIMEOUT))));
		Conditions.await("the granted lease runs out", WAIT, () -> !redis.hasKey(lockKey));
		LockHandle taken = acquired(
				LockAttempt.join(next.tryLock(LockRequest.fair(key, LEASE, "next", QUEUE_TIMEOUT))));
		assertThat(taken.fencingToken()).as("next holder's token").isGreaterThan(stale.fencingToken());
		assertThat(stale.renew(LEASE)).as("the stale holder renews").isFalse();
		assertThat(stale.release()).as("the stale holder releases").isFalse();
		assertThat(TestRedis.mutexFence(redis, lockKey)).isEqualTo(Long.toString(taken.fencingToken()));
		assertThat(taken.release()).isTrue();
	}

	/**
	 * A waiter that gives up as the lock is granted to it passes the lock on to the next
	 * waiter, instead of leaving it held by nobody for a lease.
	 */
	@Test
	void aWaiterThatGivesUpAsItIsGrantedPassesTheLockOn() {
		String key = key();
		Queue queue = twoWaitersQueued(key, "leaver", LEASE, "next");
		LockHandle holder = queue.holder();
		RedisLockProvider leaver = queue.first();
		RedisLockProvider next = queue.second();
		assertThat(holder.release()).isTrue();
		await(queue.firstWoken(), "the leaver is told of its grant");
		leaver.withdraw(LockRequest.fair(key, LEASE, "leaver", QUEUE_TIMEOUT));
		await(queue.secondWoken(), "the next waiter is told of its grant");
		long scriptsBefore = TestRedis.scriptCalls(redis);
		LockHandle taken = acquired(
				LockAttempt.join(next.tryLock(LockRequest.fair(key, LEASE, "next", QUEUE_TIMEOUT))));
		assertScriptCalls(scriptsBefore, 1, "the grant's extension to the lease");
		assertThat(taken.fencingToken()).isGreaterThan(holder.fencingToken());
		assertThat(leaver.fairWaits()).isZero();
		assertThat(taken.release()).isTrue();
	}

	/**
	 * A grant whose message never arrived (no subscription) is found by the waiter's next
	 * attempt, since every attempt of one wait has the same owner: the lock is the
	 * waiter's, not held by nobody for a lease.
	 */
	@Test
	void aGrantWhoseMessageWasLostIsFoundByTheNextAttempt() {
		String key = key();
		String lockKey = TestRedis.PREFIX + key;
		RedisLockProvider holderProvider = provider();
		RedisLockProvider deaf = provider();
		LockHandle holder = acquired(
				LockAttempt.join(holderProvider.tryLock(LockRequest.fair(key, LEASE, "holder", QUEUE_TIMEOUT))));
		assertThat(LockAttempt.join(deaf.tryLock(LockRequest.fair(key, LEASE, "deaf", QUEUE_TIMEOUT))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(holder.release()).isTrue();
		String granted = TestRedis.mutexFence(redis, lockKey);
		assertThat(granted).as("granted on release").isNotNull();
		LockHandle taken = acquired(
				LockAttempt.join(deaf.tryLock(LockRequest.fair(key, LEASE, "deaf", QUEUE_TIMEOUT))));
		assertThat(Long.toString(taken.fencingToken())).isEqualTo(granted);
		assertThat(taken.release()).isTrue();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	/**
	 * A holder of {@code key}, and behind it two waiters queued in this order, each with
	 * a provider of its own and listening for its grant: {@code first} asking for
	 * {@code firstLease}, {@code second} for {@link #LEASE}.
	 */
	private Queue twoWaitersQueued(String key, String first, Duration firstLease, String second) {
		RedisLockProvider holderProvider = provider();
		RedisLockProvider firstProvider = provider();
		RedisLockProvider secondProvider = provider();
		Wakes firstWoken = listen(firstProvider, key);
		Wakes secondWoken = listen(secondProvider, key);
		LockHandle holder = acquired(
				LockAttempt.join(holderProvider.tryLock(LockRequest.fair(key, LEASE, "holder", QUEUE_TIMEOUT))));
		assertThat(LockAttempt.join(firstProvider.tryLock(LockRequest.fair(key, firstLease, first, QUEUE_TIMEOUT))))
			.as(first + " queues")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(LockAttempt.join(secondProvider.tryLock(LockRequest.fair(key, LEASE, second, QUEUE_TIMEOUT))))
			.as(second + " queues")
			.isInstanceOf(LockAttempt.Busy.class);
		return new Queue(holder, firstProvider, firstWoken, secondProvider, secondWoken);
	}

	/**
	 * {@code paused} (asking for {@link #SHORT_LEASE}) and {@code next} queued behind a
	 * holder, which releases: the lock is granted to {@code paused}, which is told.
	 */
	private Queue grantedToAPausedWaiter(String key) {
		Queue queue = twoWaitersQueued(key, "paused", SHORT_LEASE, "next");
		assertThat(queue.holder().release()).isTrue();
		await(queue.firstWoken(), "the paused waiter is told of its grant");
		return queue;
	}

	private record Queue(LockHandle holder, RedisLockProvider first, Wakes firstWoken, RedisLockProvider second,
			Wakes secondWoken) {
	}

	private RedisLockProvider provider() {
		RedisLockProvider provider = new RedisLockProvider(factory, TestRedis.PREFIX, false);
		this.providers.add(provider);
		TestRedis.awaitAnswers(provider);
		return provider;
	}

	/**
	 * Subscribes to the key's release signals, as a waiter does, and waits until heard;
	 * wake-ups from here on are counted (the subscription's start wakes its waiters too).
	 */
	private Wakes listen(RedisLockProvider provider, String key) {
		AtomicInteger count = new AtomicInteger();
		this.subscriptions.add(provider.releaseSignals().subscribe(key, count::incrementAndGet));
		Conditions.await("the release subscription is up", WAIT, () -> provider.releaseSignals().isListening(key));
		// The start wakes every waiter once it has subscribed, in case a release went
		// unheard: that wake is not a grant's.
		Conditions.await("the subscription's start is over", WAIT, provider::signalsStartFinished);
		return new Wakes(count, count.get());
	}

	private static void await(Wakes wakes, String what) {
		Conditions.await(what, WAIT, wakes::woken);
	}

	/** Wake-ups of one subscription since it was heard. */
	private record Wakes(AtomicInteger count, int baseline) {

		boolean woken() {
			return this.count.get() > this.baseline;
		}

	}

	/**
	 * Exactly {@code expected} script calls since {@code before}: the extension of a
	 * grant is not waited for, so it may reach Redis after the acquire returned.
	 */
	private static void assertScriptCalls(long before, long expected, String what) {
		Conditions.await("script calls: " + what, WAIT, () -> TestRedis.scriptCalls(redis) - before >= expected);
		assertThat(TestRedis.scriptCalls(redis) - before).as("script calls: " + what).isEqualTo(expected);
	}

	private static String key() {
		return "grant-" + UUID.randomUUID();
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
