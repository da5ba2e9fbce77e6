package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * How waiters wait, on a {@code redis-server} of its own so that
 * {@code INFO commandstats} counts only these commands: woken by the release (not by
 * polling), one thread per JVM talking to Redis however many wait locally, and a lost
 * signal costing at most the retry interval. The retry interval is set long (2 s) so that
 * a waiter that polled instead of being signalled would need many more commands and far
 * more time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class WaitingTests {

	private static final Duration RETRY = Duration.ofSeconds(2);

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private DefaultLockTemplate template;

	private RedisLockProvider provider;

	/**
	 * Another JVM's template: its own provider, subscription, connection and scheduler.
	 */
	private DefaultLockTemplate other;

	private RedisLockProvider otherProvider;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		otherFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		otherFactory.destroy();
		server.close();
	}

	@BeforeEach
	void createTemplates() {
		this.provider = new RedisLockProvider(factory, "lock:", false);
		this.template = template(this.provider);
		this.otherProvider = new RedisLockProvider(otherFactory, "lock:", false);
		this.other = template(this.otherProvider);
	}

	private DefaultLockTemplate template(RedisLockProvider provider) {
		return template(provider,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(10))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(RETRY)
					.build());
	}

	private DefaultLockTemplate template(RedisLockProvider provider, LockOptions defaults) {
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		this.closeables.add(provider);
		return new DefaultLockTemplate(provider, scheduler, defaults);
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	/**
	 * Ten hand-offs to a waiter of another JVM: each costs the holder's acquire and
	 * release, and the waiter's busy attempt, acquire and release (5 script calls), and
	 * the waiter takes the lock well within its 2 s retry interval.
	 */
	@Test
	void aWaiterInAnotherJvmIsWokenByTheReleaseNotByPolling() throws Exception {
		awaitSubscription(this.template, this.other, this.otherProvider);
		int handoffs = 10;
		long[] latencies = new long[handoffs];
		long scriptCalls = 0;
		for (int i = 0; i < handoffs; i++) {
			String key = key();
			long before = TestRedis.scriptCalls(redis);
			Lease held = this.template.acquire(key, LockOptions.defaults());
			CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
				try (Lease lease = this.other.acquire(key, LockOptions.defaults())) {
					return System.nanoTime();
				}
			}, TestThreads.EACH);
			await("the waiter marked the lock", () -> TestRedis.mutexWaited(redis.opsForValue().get("lock:" + key)));
			long released = System.nanoTime();
			held.release();
			latencies[i] = waiter.get(10, TimeUnit.SECONDS) - released;
			scriptCalls += TestRedis.scriptCalls(redis) - before;
		}
		Arrays.sort(latencies);
		System.out.printf(
				"Release signal: %d hand-offs to another JVM, %.2f script calls each (acquire, busy,"
						+ " release, acquire), wake-up p50 %.2f ms, max %.2f ms, retry interval %d ms%n",
				handoffs, scriptCalls / (double) handoffs, latencies[handoffs / 2] / 1e6, latencies[handoffs - 1] / 1e6,
				RETRY.toMillis());
		assertThat(scriptCalls).as("script calls over %d hand-offs", handoffs).isEqualTo(5L * handoffs);
		assertThat(latencies[handoffs - 1]).as("slowest wake-up, ns").isLessThan(RETRY.toNanos() / 2);
		assertThat(this.provider.subscribedKeys()).isZero();
	}

	/**
	 * Eight threads of one JVM wait for a lock held by another JVM: only one of them
	 * talks to Redis (one busy attempt, then silence until the release), and after the
	 * release they take the lock one after the other, each hand-off inside the JVM
	 * costing one release and one acquire.
	 */
	@Test
	void threadsOfOneJvmQueueLocallySoThatOneOfThemTalksToRedis() throws Exception {
		awaitSubscription(this.other, this.template, this.provider);
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		long before = TestRedis.scriptCalls(redis);
		List<Long> order = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			waiters.add(CompletableFuture.runAsync(() -> {
				try (Lease lease = this.template.acquire(key, LockOptions.defaults())) {
					order.add(lease.fencingToken());
				}
			}, (task) -> new Thread(task).start()));
		}
		await("a waiter marked the lock", () -> TestRedis.mutexWaited(redis.opsForValue().get("lock:" + key)));
		await("all eight threads queued", () -> this.template.queuedKeys() == 1
				&& Thread.getAllStackTraces().keySet().stream().filter(this::waitsForTheLock).count() >= 8);
		long whileHeld = TestRedis.scriptCalls(redis) - before;
		held.release();
		for (CompletableFuture<Void> waiter : waiters) {
			waiter.get(10, TimeUnit.SECONDS);
		}
		long total = TestRedis.scriptCalls(redis) - before;
		System.out.printf(
				"Local queue: 8 threads waiting on a lock held by another JVM sent %d script call(s) while"
						+ " it was held; %d in all for the 8 acquisitions and releases plus the holder's release%n",
				whileHeld, total);
		assertThat(whileHeld).as("script calls by 8 local waiters while the lock was held").isEqualTo(1);
		assertThat(order).hasSize(8).isSorted();
		// 1 busy + 1 release + 8 x (acquire + release), and at most a busy retry or two
		// where a local hand-off races the release signal.
		assertThat(total).as("script calls for 8 local acquisitions").isLessThanOrEqualTo(20);
		assertThat(this.template.queuedKeys()).isZero();
		assertThat(this.provider.subscribedKeys()).isZero();
	}

	/**
	 * The release message is lost (the subscription connection is killed just before the
	 * release): the waiter still takes the lock, at its next retry.
	 */
	@Test
	void aLostReleaseSignalCostsAtMostTheRetryInterval() throws Exception {
		awaitSubscription(this.template, this.other, this.otherProvider);
		String key = key();
		Lease held = this.template.acquire(key, LockOptions.defaults());
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
			try (Lease lease = this.other.acquire(key, LockOptions.defaults())) {
				return System.nanoTime();
			}
		}, TestThreads.EACH);
		await("the waiter marked the lock", () -> TestRedis.mutexWaited(redis.opsForValue().get("lock:" + key)));
		assertThat(server.command("CLIENT", "KILL", "TYPE", "pubsub")).isNotEqualTo(":0");
		long released = System.nanoTime();
		held.release();
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(waiter.get(10, TimeUnit.SECONDS) - released);
		System.out.printf(
				"Lost release signal: the waiter took the lock %d ms after the release (retry interval" + " %d ms)%n",
				waitedMillis, RETRY.toMillis());
		assertThat(waitedMillis).isLessThanOrEqualTo(RETRY.plusSeconds(1).toMillis());
	}

	/**
	 * The subscription starts with the first wait of a JVM; until it is up, waiters poll.
	 * One wait brings it up.
	 */
	/**
	 * A release made after a waiter found the lock busy, but before its JVM's
	 * subscription reached Redis, is published to nobody; the waiter must take the lock
	 * all the same, although its retry interval, its wait time and the holder's lease are
	 * far longer than the test waits. Two things catch it: until the subscription is
	 * confirmed the waiter polls with a backoff that starts at a few milliseconds, and
	 * the confirmation wakes every waiter. Each alone keeps this test green.
	 */
	@Test
	void aReleaseBeforeTheSubscriptionTookEffectIsCaughtAtItsConfirmation() throws Exception {
		try (FaultProxy proxy = FaultProxy.start(server.host(), server.port())) {
			// The client's default settings: the bound below must not rest on a short
			// timeout.
			LettuceConnectionFactory proxied = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(proxy.host(), proxy.port()));
			proxied.afterPropertiesSet();
			proxied.start();
			this.closeables.add(proxied::destroy);
			RedisLockProvider fresh = new RedisLockProvider(proxied, "lock:", false);
			LockOptions patient = LockOptions.builder()
				.waitTime(Duration.ofMinutes(2))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMinutes(5))
				.build();
			DefaultLockTemplate waiting = template(fresh, patient);
			// Opens the waiting JVM's command connection, which stays passable.
			waiting.tryAcquire(key(), LockOptions.builder().waitTime(Duration.ZERO).build()).orElseThrow().release();
			String key = key();
			// A lease far longer than the test, so that its end wakes nobody in time.
			Lease held = this.template.acquire(key, LockOptions.builder().leaseTime(Duration.ofMinutes(10)).build());
			proxy.holdNewConnections();
			int connections = proxy.openConnections();
			long before = TestRedis.scriptCalls(redis);
			CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> waiting.acquire(key, patient).release(),
					TestThreads.EACH);
			await("the waiter's busy attempt and its held subscription connection",
					() -> TestRedis.scriptCalls(redis) > before && proxy.openConnections() > connections);
			assertThat(fresh.isListening()).as("the waiting JVM's subscription").isFalse();
			held.release();
			proxy.heal();
			waiter.get(20, TimeUnit.SECONDS);
		}
	}

	private static void awaitSubscription(DefaultLockTemplate holder, DefaultLockTemplate waiting,
			RedisLockProvider waitingProvider) throws Exception {
		String key = key();
		Lease held = holder.acquire(key, LockOptions.defaults());
		CompletableFuture<Void> waiter = CompletableFuture
			.runAsync(() -> waiting.acquire(key, LockOptions.defaults()).release(), TestThreads.EACH);
		await("the waiting JVM's subscription is up", waitingProvider::isListening);
		held.release();
		waiter.get(10, TimeUnit.SECONDS);
	}

	private boolean waitsForTheLock(Thread thread) {
		for (StackTraceElement frame : thread.getStackTrace()) {
			if (frame.getClassName().equals(CallerThread.class.getName()) && frame.getMethodName().equals("await")) {
				return true;
			}
		}
		return false;
	}

	private static String key() {
		return "waiting-" + UUID.randomUUID();
	}

	private static void await(String what, BooleanSupplier condition) {
		Conditions.await(what, Duration.ofSeconds(10), condition);
	}

}
