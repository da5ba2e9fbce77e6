package dev.distlock.redis;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.api.async.RedisAsyncCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * The library through a {@link FaultProxy}: replies lost, late, or cut off by a
 * partition, between a real {@code redis-server} and Lettuce as an application has it
 * (Spring Data, a shared connection, a command timeout). What is really in Redis is read
 * over a second, direct connection that no fault touches; the same connection serves as
 * "another JVM" competing for the lock.
 *
 * <p>
 * The server is this class's own, so {@code INFO commandstats} counts only its commands:
 * that is how a test shows a fault actually hit (the lock was taken in Redis, then
 * deleted) rather than passing for lack of one. Each test states the property that makes
 * it fail.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class LostReplyTests {

	private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(300);

	/** Boot's default: long enough for Lettuce to reconnect and re-send a command. */
	private static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(60);

	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	private static final Duration QUEUE_TIMEOUT = Duration.ofSeconds(1);

	private static RedisServer server;

	private static LettuceConnectionFactory direct;

	/** Redis as it really is: a direct connection, never behind the proxy. */
	private static StringRedisTemplate redis;

	/** Another JVM's provider, on the direct connection. */
	private static RedisLockProvider otherProvider;

	private final List<LettuceConnectionFactory> proxiedFactories = new ArrayList<>();

	private FaultProxy proxy;

	private RenewalScheduler scheduler;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		direct = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(direct);
		otherProvider = new RedisLockProvider(direct, "lock:", false);
	}

	@AfterAll
	static void stopRedis() {
		direct.destroy();
		server.close();
	}

	@BeforeEach
	void startProxy() {
		this.proxy = FaultProxy.start(server.host(), server.port());
		this.scheduler = new RenewalScheduler();
	}

	@AfterEach
	void closeProxy() {
		this.scheduler.close();
		this.proxy.heal();
		this.proxiedFactories.forEach(LettuceConnectionFactory::destroy);
		this.proxy.close();
	}

	/**
	 * (a) The acquire reaches Redis and takes the lock, but its reply is lost, so the
	 * client times out not knowing it holds the lock. The provider must fail the acquire
	 * and delete the lock by the attempt's owner token. Fails if the lock key is left in
	 * Redis: an orphan nobody will release, which would turn every caller away for the
	 * whole 30 s lease (as it does when {@code RedisLockProvider.tryLock} skips its
	 * clean-up).
	 */
	@Test
	void aLostAcquireReplyFailsTheAcquireAndLeavesNoLockInRedis() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(COMMAND_TIMEOUT), "lock:", false);
		warmUp(provider);
		String key = key();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.dropNextReply();
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.withMessageContaining(key)
			.withCauseInstanceOf(RedisCommandTimeoutException.class);
		assertThat(this.proxy.droppedReplies()).as("replies the proxy dropped").isEqualTo(1);
		// The clean-up is sent without waiting for it: the caller already has its answer.
		Conditions.await("the clean-up ran", Duration.ofSeconds(10), () -> !redis.hasKey("lock:" + key));
		assertThat(callsSince(before)).as("the acquire took the lock in Redis (set), the clean-up deleted it (del)")
			.hasEntrySatisfying("set", (calls) -> assertThat(calls).isPositive())
			.containsEntry("del", 1L);
		assertThat(redis.hasKey("lock:" + key)).as("lock key left in Redis").isFalse();
	}

	/**
	 * (a) The same lost reply through the template, waiting for nothing: the caller gets
	 * the {@link LockBackendException}, and another client gets the lock at once, not
	 * after the 30 s lease. The clean-up is sent without waiting for it (the caller
	 * already has its answer), so "at once" is within a round trip or two: the other
	 * client tries for at most a second. Fails if the lock stays orphaned.
	 */
	@Test
	void aLostAcquireReplyThroughTheTemplateLeavesTheLockFreeForAnotherClientAtOnce() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(COMMAND_TIMEOUT), "lock:", false);
		warmUp(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		this.proxy.dropNextReply();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> template.acquire(key, noWait()));
		assertThat(this.proxy.droppedReplies()).as("replies the proxy dropped").isEqualTo(1);
		DefaultLockTemplate other = new DefaultLockTemplate(otherProvider, this.scheduler, defaults());
		Optional<Lease> next = other.tryAcquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(1)).build());
		assertThat(next).as("another client, within a second of the lost reply").isPresent();
		next.get().release();
	}

	/**
	 * (a) A lost reply as TCP produces one: not gone but late, arriving after the command
	 * timeout. The clean-up is sent behind the acquire on the same connection, so it runs
	 * after it in Redis. Fails if the lock key is left in Redis. Also shows the
	 * connection is usable again once the late replies have drained.
	 */
	@Test
	void anAcquireReplyLaterThanTheCommandTimeoutLeavesNoLockInRedis() {
		LettuceConnectionFactory factory = throughProxy(COMMAND_TIMEOUT);
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		warmUp(provider);
		String key = key();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.delayReplies(Duration.ofMillis(500));
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.withCauseInstanceOf(RedisCommandTimeoutException.class);
		Conditions.await("the clean-up ran", Duration.ofSeconds(10), () -> !redis.hasKey("lock:" + key));
		assertThat(callsSince(before)).as("the acquire took the lock in Redis (set), the clean-up deleted it (del)")
			.hasEntrySatisfying("set", (calls) -> assertThat(calls).isPositive())
			.containsEntry("del", 1L);
		assertThat(redis.hasKey("lock:" + key)).as("lock key left in Redis").isFalse();
		this.proxy.heal();
		await("the connection answers again", Duration.ofSeconds(5), () -> answers(factory));
		acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE)))).release();
	}

	/**
	 * (a) The acquire's reply is lost with its connection, as TCP loses it: Lettuce
	 * reconnects and sends the same call again, which finds the lock held by its own
	 * owner. With a command timeout long enough for the re-send (Boot's default, 60 s),
	 * the caller must get the lock with the token of the first run. Fails if the second
	 * run reports the lock busy: then nobody holds what Redis has for the whole lease.
	 */
	@Test
	void anAcquireReSentAfterItsReplyWasLostReturnsTheLockToItsCaller() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(DEFAULT_COMMAND_TIMEOUT), "lock:", false);
		warmUp(provider);
		String key = key();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.dropNextReplyAndReset();
		LockAttempt attempt = LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertThat(this.proxy.droppedReplies()).as("replies the proxy dropped").isEqualTo(1);
		assertThat(callsSince(before)).as("the acquire ran twice: sent, then re-sent after the reset")
			.containsEntry("evalsha", 2L);
		LockHandle handle = acquired(attempt);
		assertThat(TestRedis.mutexFence(redis, "lock:" + key)).as("the lock in Redis")
			.isEqualTo(Long.toString(handle.fencingToken()));
		assertThat(handle.release()).isTrue();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	/**
	 * (a) As {@link #anAcquireReSentAfterItsReplyWasLostReturnsTheLockToItsCaller()} for
	 * a fair acquire, whose second run must also not put its waiter back in the queue.
	 * Fails if the re-sent call reports the lock busy (the lock orphaned for its lease,
	 * the caller queued behind its own lock), or if the waiter is left in the queue.
	 */
	@Test
	void aFairAcquireReSentAfterItsReplyWasLostReturnsTheLockToItsCaller() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(DEFAULT_COMMAND_TIMEOUT), "lock:", false);
		warmUpFair(provider);
		String key = key();
		String waiter = "waiter-" + UUID.randomUUID();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.dropNextReplyAndReset();
		LockAttempt attempt = LockAttempt
			.join(provider.tryLock(LockRequest.fair(key, LONG_LEASE, waiter, QUEUE_TIMEOUT)));
		assertThat(this.proxy.droppedReplies()).as("replies the proxy dropped").isEqualTo(1);
		assertThat(callsSince(before)).as("the acquire ran twice: sent, then re-sent after the reset")
			.containsEntry("evalsha", 2L);
		assertThat(redis.keys("*" + key + ":*")).as("queue keys after the re-sent acquire").isEmpty();
		LockHandle handle = acquired(attempt);
		assertThat(TestRedis.mutexFence(redis, "lock:" + key)).as("the lock in Redis")
			.isEqualTo(Long.toString(handle.fencingToken()));
		assertThat(handle.release()).isTrue();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	/**
	 * (a) The same re-sent fair acquire through the template, waiting for nothing: the
	 * caller gets the lease, and once it is released another client gets the lock at
	 * once. Fails if the caller is turned away by its own lock, which then blocks every
	 * other client for the 30 s lease.
	 */
	@Test
	void aFairAcquireReSentThroughTheTemplateGivesTheCallerTheLease() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(DEFAULT_COMMAND_TIMEOUT), "lock:", false);
		warmUpFair(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		this.proxy.dropNextReplyAndReset();
		Optional<Lease> lease = template.tryAcquire(key, LockOptions.builder().fair(true).build());
		assertThat(this.proxy.droppedReplies()).as("replies the proxy dropped").isEqualTo(1);
		assertThat(lease).as("lease of the caller whose acquire was re-sent").isPresent();
		assertThat(TestRedis.mutexFence(redis, "lock:" + key)).as("the lock in Redis")
			.isEqualTo(Long.toString(lease.get().fencingToken()));
		lease.get().release();
		DefaultLockTemplate other = new DefaultLockTemplate(otherProvider, this.scheduler, defaults());
		Optional<Lease> next = other.tryAcquire(key, LockOptions.builder().fair(true).build());
		assertThat(next).as("another client, right after the release").isPresent();
		next.get().release();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	/**
	 * (b) Every acquire reply takes 400 ms, twice the 200 ms lease: when it arrives the
	 * lock may already have expired and been taken by another client, so the template
	 * must not count it (the "too slow to count" rule of {@link DefaultLockTemplate}).
	 * Fails if {@code tryAcquire} returns a lease. (No lock of this caller is left in
	 * Redis either; that check cannot fail here, as the key's own 200 ms expiry comes
	 * before the reply.)
	 */
	@Test
	void anAcquireReplySlowerThanTheLeaseDoesNotCount() {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(Duration.ofSeconds(2)), "lock:", false);
		warmUp(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.delayReplies(Duration.ofMillis(400));
		Optional<Lease> lease = template.tryAcquire(key,
				LockOptions.builder()
					.waitTime(Duration.ofMillis(300))
					.leaseTime(Duration.ofMillis(200))
					.autoRenew(false)
					.build());
		assertThat(callsSince(before)).as("the late attempt did take the lock in Redis")
			.hasEntrySatisfying("set", (calls) -> assertThat(calls).isPositive());
		assertThat(lease).as("lease from a reply that came after the lease time").isEmpty();
		assertThat(redis.hasKey("lock:" + key)).as("lock key left in Redis").isFalse();
	}

	/**
	 * (b) A late reply, then Redis is fast again within the wait time: the lease the
	 * template returns is from a later attempt, with a higher fencing token, and really
	 * held in Redis. Fails if the template hands out the late attempt (its token, a key
	 * already expired in Redis).
	 */
	@Test
	void afterALateAcquireReplyTheLeaseComesFromALaterAttempt() throws Exception {
		RedisLockProvider provider = new RedisLockProvider(throughProxy(Duration.ofSeconds(2)), "lock:", false);
		warmUp(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		long scriptsBefore = TestRedis.scriptCalls(redis);
		this.proxy.delayReplies(Duration.ofMillis(400));
		CompletableFuture<Optional<Lease>> result = CompletableFuture.supplyAsync(() -> template.tryAcquire(key,
				LockOptions.builder().waitTime(Duration.ofSeconds(5)).leaseTime(Duration.ofMillis(200)).build()),
				TestThreads.EACH);
		await("the first acquire ran in Redis", Duration.ofSeconds(5),
				() -> TestRedis.scriptCalls(redis) - scriptsBefore >= 1);
		// the acquire script leaves the fencing counter (the key prefix itself) at the
		// token it handed out
		long lateToken = Long.parseLong(redis.opsForValue().get("lock:"));
		await("the late reply arrived and its lock was released", Duration.ofSeconds(5),
				() -> TestRedis.scriptCalls(redis) - scriptsBefore >= 2);
		this.proxy.heal();
		Lease lease = result.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(lease.fencingToken()).as("token of the late attempt: " + lateToken).isGreaterThan(lateToken);
		assertThat(lease.isHeld()).isTrue();
		assertThat(TestRedis.mutexFence(redis, "lock:" + key)).as("the lock in Redis")
			.isEqualTo(Long.toString(lease.fencingToken()));
		lease.release();
		assertThat(redis.hasKey("lock:" + key)).isFalse();
	}

	/**
	 * (c) The holder of a 600 ms lease with auto-renew is cut off by a partition: no
	 * replies, no errors, open connections. It must stop believing it holds the lock by
	 * the lease deadline, the earliest moment Redis may expire the key and another client
	 * take it. Fails if {@code isHeld()} is still true more than about the lease after
	 * the partition began, or true at a moment another client holds the lock (two
	 * holders); or if a request held during the partition (the renewals, the release)
	 * deletes the new holder's lock once the partition heals.
	 *
	 * <p>
	 * {@code release()} on the lost lease throws {@link LeaseLostException}, not
	 * {@link LockBackendException}: the lease was already lost, and the loss (another
	 * holder may have run the critical section meanwhile) is what the caller must hear
	 * about; the release command timing out on the partitioned connection is attached as
	 * a suppressed {@link LockBackendException}. (Released before its deadline, the same
	 * lease would throw the {@link LockBackendException} itself, and the key would expire
	 * with its lease.)
	 */
	@Test
	void aPartitionedHolderGivesTheLeaseUpByItsDeadline() {
		Duration leaseTime = Duration.ofMillis(600);
		LettuceConnectionFactory partitioned = throughProxy(COMMAND_TIMEOUT);
		RedisLockProvider provider = new RedisLockProvider(partitioned, "lock:", false);
		warmUp(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		Lease lease = template.acquire(key,
				LockOptions.builder().waitTime(Duration.ZERO).leaseTime(leaseTime).autoRenew(true).build());
		this.proxy.blackhole();
		long cut = System.nanoTime();
		long giveUp = cut + Duration.ofSeconds(5).toNanos();
		long lostAt = 0;
		LockHandle taken = null;
		while (taken == null) {
			if (System.nanoTime() - giveUp > 0) {
				fail("neither lost nor taken over 5 s after the partition (isHeld=" + lease.isHeld() + ")");
			}
			if (lostAt == 0 && !lease.isHeld()) {
				lostAt = System.nanoTime();
			}
			if (LockAttempt.join(otherProvider
				.tryLock(LockRequest.exclusive(key, LONG_LEASE))) instanceof LockAttempt.Acquired acquired) {
				taken = acquired.handle();
				assertThat(lease.isHeld()).as("partitioned holder's view while another client holds the lock")
					.isFalse();
			}
			else {
				LockSupport.parkNanos(1_000_000);
			}
		}
		Duration noticedAfter = Duration.ofNanos(lostAt - cut);
		assertThat(noticedAfter).as("partition to isHeld() false (lease " + leaseTime.toMillis() + "ms)")
			.isBetween(leaseTime.dividedBy(2), leaseTime.plusMillis(100));
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release)
			.withMessageContaining(key)
			.satisfies((ex) -> assertThat(ex.getSuppressed()).hasAtLeastOneElementOfType(LockBackendException.class));
		this.proxy.heal();
		await("the partitioned connection answers again", Duration.ofSeconds(5), () -> answers(partitioned));
		assertThat(TestRedis.mutexFence(redis, "lock:" + key))
			.as("the new holder's lock, after the held renewals and release reached Redis")
			.isEqualTo(Long.toString(taken.fencingToken()));
		assertThat(taken.release()).isTrue();
		DefaultLockTemplate afterHeal = new DefaultLockTemplate(
				new RedisLockProvider(throughProxy(COMMAND_TIMEOUT), "lock:", false), this.scheduler, defaults());
		Lease next = afterHeal.tryAcquire(key, noWait()).orElseThrow();
		assertThat(next.fencingToken()).isGreaterThan(taken.fencingToken());
		next.release();
	}

	/**
	 * (d) Redis answers, but every reply takes 450 ms, just under a third of the 1.5 s
	 * lease (the renewal interval), for three lease periods, on the client's default
	 * command timeout. Renewal must keep the lease: {@code isHeld()} stays true, another
	 * client stays out, and Redis still holds the key under this lease's token. Fails if
	 * the lease is lost or taken while replies are slow but timely, or if renewals
	 * stopped (then the key expires after one lease). Here the passing of time is itself
	 * the condition.
	 */
	@Test
	void renewalKeepsTheLeaseWhileRepliesAreSlowButTimely() {
		Duration leaseTime = Duration.ofMillis(1500);
		RedisLockProvider provider = new RedisLockProvider(throughProxy(DEFAULT_COMMAND_TIMEOUT), "lock:", false);
		warmUp(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.scheduler, defaults());
		String key = key();
		Lease lease = template.acquire(key,
				LockOptions.builder().waitTime(Duration.ZERO).leaseTime(leaseTime).autoRenew(true).build());
		Map<String, Long> before = TestRedis.commandCalls(redis);
		this.proxy.delayReplies(Duration.ofMillis(450));
		long end = System.nanoTime() + leaseTime.multipliedBy(3).toNanos();
		while (System.nanoTime() - end < 0) {
			assertThat(lease.isHeld()).as("lease while replies take 450ms").isTrue();
			assertThat(LockAttempt.join(otherProvider.tryLock(LockRequest.exclusive(key, LONG_LEASE))))
				.as("another client")
				.isInstanceOf(LockAttempt.Busy.class);
			LockSupport.parkNanos(leaseTime.toNanos() / 20);
		}
		assertThat(callsSince(before).getOrDefault("pexpire", 0L)).as("renewals over three lease periods")
			.isGreaterThanOrEqualTo(6);
		assertThat(TestRedis.mutexFence(redis, "lock:" + key)).as("the lock in Redis")
			.isEqualTo(Long.toString(lease.fencingToken()));
		this.proxy.heal();
		lease.release();
		assertThat(redis.hasKey("lock:" + key)).isFalse();
	}

	/**
	 * A release made while the client is cut off from Redis and reconnecting: the caller
	 * is told it failed, after the store timeout, and the client holds the command and
	 * sends it once it is back, so the lock is freed then rather than at the end of its
	 * lease. Fails if the release is dropped while the client reconnects (the lock then
	 * stays for its whole 30 s lease).
	 */
	@Test
	void aReleaseMadeWhileRedisIsOutOfReachRunsOnceItIsBack() throws Exception {
		LettuceConnectionFactory factory = throughProxy(DEFAULT_COMMAND_TIMEOUT);
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		warmUp(provider);
		String key = key();
		LockHandle handle = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			this.proxy.retarget(server.host(), unused.getLocalPort());
		}
		this.proxy.disconnectAll();
		await("the client sees its connection drop", Duration.ofSeconds(10), () -> !isOpen(factory));
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(handle::release)
			.withMessageContaining("did not answer");
		assertThat(redis.hasKey("lock:" + key)).as("the lock while Redis is out of reach").isTrue();
		this.proxy.retarget(server.host(), server.port());
		await("the release, sent once the client is back, frees the lock", Duration.ofSeconds(20),
				() -> !redis.hasKey("lock:" + key));
	}

	/**
	 * A client that does not reconnect by itself (auto-reconnect off, a connection of its
	 * own rather than the factory's shared one) has its connection cut: the store takes a
	 * new one from the factory, so its calls work again. Fails if the lost connection is
	 * kept: every later call fails.
	 */
	@Test
	void aConnectionThatWillNotReconnectIsReplaced() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.proxy.host(), this.proxy.port()),
				LettuceClientConfiguration.builder()
					.clientOptions(ClientOptions.builder().autoReconnect(false).build())
					.build());
		factory.setShareNativeConnection(false);
		factory.afterPropertiesSet();
		factory.start();
		this.proxiedFactories.add(factory);
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		warmUp(provider);
		this.proxy.disconnectAll();
		await("a lock taken again after the cut", Duration.ofSeconds(20), () -> {
			try {
				LockAttempt attempt = LockAttempt.join(provider.tryLock(LockRequest.exclusive(key(), LONG_LEASE)));
				return attempt instanceof LockAttempt.Acquired acquired && acquired.handle().release();
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
	}

	/** Whether the factory's shared connection is connected (not reconnecting). */
	private static boolean isOpen(LettuceConnectionFactory factory) {
		try (RedisConnection connection = factory.getConnection()) {
			return ((RedisAsyncCommands<?, ?>) connection.getNativeConnection()).getStatefulConnection().isOpen();
		}
	}

	/**
	 * A started connection factory whose connections go through the proxy; destroyed
	 * after the test.
	 */
	private LettuceConnectionFactory throughProxy(Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.proxy.host(), this.proxy.port()),
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		this.proxiedFactories.add(factory);
		return factory;
	}

	/**
	 * One acquire, renew and release, so that the scripts are loaded and each later call
	 * is one {@code EVALSHA} with a one-line reply (the first call of a script is
	 * {@code EVALSHA}, {@code NOSCRIPT}, then {@code EVAL}).
	 */
	private static void warmUp(RedisLockProvider provider) {
		TestRedis.awaitAnswers(provider);
		LockHandle handle = acquired(
				LockAttempt.join(provider.tryLock(LockRequest.exclusive("warm-up-" + UUID.randomUUID(), LONG_LEASE))));
		assertThat(handle.renew(LONG_LEASE)).isTrue();
		assertThat(handle.release()).isTrue();
	}

	/** As {@link #warmUp}, for the fair acquire script. */
	private static void warmUpFair(RedisLockProvider provider) {
		LockHandle handle = acquired(LockAttempt.join(provider
			.tryLock(LockRequest.fair("warm-up-" + UUID.randomUUID(), LONG_LEASE, "warm-up", QUEUE_TIMEOUT))));
		assertThat(handle.release()).isTrue();
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

	private static LockOptions defaults() {
		return LockOptions.builder()
			.waitTime(Duration.ZERO)
			.leaseTime(LONG_LEASE)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
	}

	private static LockOptions noWait() {
		return LockOptions.builder().waitTime(Duration.ZERO).build();
	}

	private static String key() {
		return "lost-reply-" + UUID.randomUUID();
	}

	/** Whether a command through {@code factory} gets its own reply now. */
	private static boolean answers(LettuceConnectionFactory factory) {
		String probe = "probe-" + UUID.randomUUID();
		try {
			return Boolean.FALSE.equals(new StringRedisTemplate(factory).hasKey(probe));
		}
		catch (DataAccessException ex) {
			return false;
		}
	}

	/**
	 * Calls per command since {@code before}, leaving out the {@code INFO} calls that
	 * measure them.
	 */
	private static Map<String, Long> callsSince(Map<String, Long> before) {
		Map<String, Long> since = new TreeMap<>();
		TestRedis.commandCalls(redis).forEach((command, calls) -> {
			long delta = calls - before.getOrDefault(command, 0L);
			if (delta > 0 && !command.equals("info")) {
				since.put(command, delta);
			}
		});
		return since;
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		Conditions.await(what, timeout, condition);
	}

}
