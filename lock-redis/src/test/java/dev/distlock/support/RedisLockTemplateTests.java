package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
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

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link DefaultLockTemplate} over {@link RedisLockProvider} on a {@code redis-server} of
 * its own (so that {@code INFO commandstats} counts only this class's commands):
 * reentrancy, the watchdog, no renewal after release, loss detection, waiting,
 * interruption, and the wire cost of a lock.
 *
 * <p>
 * Where a test must show that something does <em>not</em> happen for a while (the lock is
 * not lost, no renewal is sent), the passing of time is itself the condition, and the
 * time is stated in lease periods.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class RedisLockTemplateTests {

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	private RenewalScheduler scheduler;

	private RenewalScheduler otherScheduler;

	/** This JVM's template. */
	private DefaultLockTemplate template;

	/** Another JVM's template: its own provider, connection and scheduler. */
	private DefaultLockTemplate other;

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
		LockOptions defaults = LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
		this.scheduler = new RenewalScheduler();
		this.otherScheduler = new RenewalScheduler();
		this.template = new DefaultLockTemplate(new RedisLockProvider(factory, "lock:", false), this.scheduler,
				defaults);
		this.other = new DefaultLockTemplate(new RedisLockProvider(otherFactory, "lock:", false), this.otherScheduler,
				defaults);
	}

	@AfterEach
	void closeSchedulers() {
		this.scheduler.close();
		this.otherScheduler.close();
	}

	private static String key() {
		return "template-" + UUID.randomUUID();
	}

	private static LockOptions lease(Duration leaseTime, boolean autoRenew) {
		return LockOptions.builder().leaseTime(leaseTime).autoRenew(autoRenew).build();
	}

	private static LockOptions noWait() {
		return LockOptions.builder().waitTime(Duration.ZERO).build();
	}

	@Test
	void theHoldingThreadReentersWithoutWaitingAndTheLockIsFreeOnlyAfterTheOutermostRelease() throws Exception {
		String key = key();
		Lease outer = this.template.acquire(key, noWait());
		try (LockContext.Scope scope = LockContext.open(outer)) {
			Lease inner = this.template.acquire(key, noWait());
			assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
			Lease innermost = this.template.acquire(key, noWait());
			innermost.release();
			inner.release();
		}
		assertThat(outer.isHeld()).isTrue();
		assertThat(this.other.tryAcquire(key, noWait())).as("other JVM after inner releases").isEmpty();
		assertThat(tryAcquireOnAnotherThread(this.template, key)).as("other thread of this JVM").isEmpty();
		outer.release();
		Optional<Lease> next = this.other.tryAcquire(key, noWait());
		assertThat(next).as("other JVM after outermost release").isPresent();
		next.get().release();
	}

	@Test
	void anotherThreadOfTheSameJvmIsExcluded() throws Exception {
		String key = key();
		Lease lease = this.template.acquire(key, noWait());
		assertThat(tryAcquireOnAnotherThread(this.template, key)).isEmpty();
		lease.release();
		Optional<Lease> afterRelease = tryAcquireOnAnotherThread(this.template, key);
		assertThat(afterRelease).isPresent();
	}

	@Test
	void theWatchdogKeepsTheLockAcrossSeveralLeases() {
		String key = key();
		Duration leaseTime = Duration.ofMillis(300);
		Lease lease = this.template.acquire(key, lease(leaseTime, true));
		long end = System.nanoTime() + leaseTime.multipliedBy(5).toNanos();
		while (System.nanoTime() < end) {
			assertThat(this.other.tryAcquire(key, noWait())).as("other JVM while renewed").isEmpty();
			assertThat(lease.isHeld()).isTrue();
			LockSupport.parkNanos(leaseTime.toNanos() / 10);
		}
		long pttl = redis.getExpire("lock:" + key, TimeUnit.MILLISECONDS);
		assertThat(pttl).as("TTL after five lease periods").isPositive().isLessThanOrEqualTo(leaseTime.toMillis());
		lease.release();
		assertThat(redis.hasKey("lock:" + key)).isFalse();
	}

	@Test
	void noRenewalIsScheduledOrSentAfterRelease() {
		// Long enough that a loaded machine (a fresh-clone build beside three others)
		// renews every lease in time: with 150 ms, all 20 were declared lost once.
		Duration leaseTime = Duration.ofMillis(600);
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			leases.add(this.template.acquire(key(), lease(leaseTime, true)));
		}
		// One renewal and one deadline check per lease, except while a batch is on the
		// wire: on a loaded machine 20 acquires can outlast half a renewal interval, and
		// the first batch goes out before the last acquire.
		await("one renewal task and one deadline check per held lease", Duration.ofSeconds(10),
				() -> this.scheduler.pendingTasks() == 20 && this.scheduler.pendingDeadlineChecks() == 20);
		long pexpireBefore = TestRedis.commandCalls(redis, "pexpire");
		scriptCallsOver(leaseTime.multipliedBy(2));
		assertThat(TestRedis.commandCalls(redis, "pexpire") - pexpireBefore)
			.as("lease extensions of 20 leases over two lease periods")
			.isGreaterThanOrEqualTo(20);
		leases.forEach(Lease::release);
		assertThat(this.scheduler.pendingTasks()).as("renewal tasks left after release").isZero();
		assertThat(this.scheduler.pendingDeadlineChecks()).as("deadline checks left after release").isZero();
		long pexpireAfterRelease = TestRedis.commandCalls(redis, "pexpire");
		assertThat(scriptCallsOver(leaseTime.multipliedBy(4))).as("script calls after release").isZero();
		assertThat(TestRedis.commandCalls(redis, "pexpire")).as("lease extensions after release")
			.isEqualTo(pexpireAfterRelease);
	}

	@Test
	void aLockDeletedBehindTheHoldersBackIsReportedLost() {
		String key = key();
		Lease lease = this.template.acquire(key, lease(Duration.ofMillis(300), true));
		redis.delete("lock:" + key);
		await("the renewal notices the loss", Duration.ofSeconds(5), () -> !lease.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release)
			.withMessageContaining(key)
			.withMessageContaining("renewal found the key expired or held by another owner");
		assertThat(this.scheduler.pendingTasks()).isZero();
	}

	@Test
	void aLockTakenOverByAnotherOwnerIsReportedLostAndItsReleaseLeavesTheNewOwnersLock() {
		String key = key();
		Lease stale = this.template.acquire(key, lease(Duration.ofMillis(200), false));
		Lease current = this.other.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build());
		assertThat(current.fencingToken()).isGreaterThan(stale.fencingToken());
		assertThat(stale.isHeld()).isFalse();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(stale::release);
		assertThat(current.isHeld()).isTrue();
		assertThat(this.template.tryAcquire(key, noWait())).as("still held by the new owner").isEmpty();
		current.release();
	}

	@Test
	void withoutAutoRenewTheLockExpiresAfterItsLeaseWhileStillHeld() {
		String key = key();
		Lease lease = this.template.acquire(key, lease(Duration.ofMillis(300), false));
		assertThat(this.scheduler.pendingTasks()).isZero();
		Lease taken = this.other.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build());
		assertThat(lease.isHeld()).isFalse();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release)
			.withMessageContaining("ran out without renewal");
		taken.release();
	}

	@Test
	void aWaiterGetsTheLockWhenItIsReleased() throws Exception {
		String key = key();
		Lease lease = this.template.acquire(key, noWait());
		CountDownLatch waiting = new CountDownLatch(1);
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
			waiting.countDown();
			return this.other.execute(key, LockOptions.builder().waitTime(Duration.ofSeconds(10)).build(),
					() -> LockContext.current().orElseThrow().fencingToken());
		}, TestThreads.EACH);
		waiting.await();
		assertThat(waiter).isNotDone();
		lease.release();
		assertThat(waiter.get(10, TimeUnit.SECONDS)).isGreaterThan(lease.fencingToken());
	}

	@Test
	void waitingEndsAfterTheWaitTime() {
		String key = key();
		Lease lease = this.other.acquire(key, noWait());
		Duration waitTime = Duration.ofMillis(200);
		LockOptions options = LockOptions.builder().waitTime(waitTime).build();
		assertThat(this.template.tryAcquire(key, options)).isEmpty();
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> this.template.acquire(key, options))
			.withMessageContaining(key)
			.satisfies((ex) -> assertThat(ex.getWaitTime()).isEqualTo(waitTime));
		lease.release();
	}

	@Test
	void anInterruptedWaiterStopsWaitingAndKeepsItsInterruptFlag() throws Exception {
		String key = key();
		Lease lease = this.other.acquire(key, noWait());
		AtomicReference<Throwable> failure = new AtomicReference<>();
		AtomicReference<Boolean> flag = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			try {
				this.template.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(30)).build());
			}
			catch (Throwable ex) {
				failure.set(ex);
				flag.set(Thread.currentThread().isInterrupted());
			}
		});
		waiter.start();
		await("the waiter is waiting", Duration.ofSeconds(5), () -> waiter.getState() == Thread.State.TIMED_WAITING);
		waiter.interrupt();
		waiter.join(5000);
		assertThat(waiter.isAlive()).isFalse();
		assertThat(failure.get()).isInstanceOf(LockAcquisitionException.class).hasMessageContaining("Interrupted");
		assertThat(flag.get()).as("interrupt flag restored").isTrue();
		lease.release();
		assertThat(this.template.tryAcquire(key, noWait())).as("the interrupted waiter left nothing held")
			.hasValueSatisfying(Lease::release);
	}

	@Test
	void executeReleasesOnEveryPathAndLetsTheActionsExceptionThrough() {
		String key = key();
		assertThat(this.template.execute(key, () -> "result")).isEqualTo("result");
		assertThat(redis.hasKey("lock:" + key)).isFalse();
		IllegalStateException failure = new IllegalStateException("boom");
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.template.run(key, () -> {
			throw failure;
		})).isSameAs(failure);
		assertThat(redis.hasKey("lock:" + key)).isFalse();
		Error error = new AssertionError("an error");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.template.run(key, () -> {
			throw error;
		})).isSameAs(error);
		assertThat(redis.hasKey("lock:" + key)).isFalse();
		assertThat(this.scheduler.pendingTasks()).isZero();
	}

	/**
	 * The wire cost the README states: one script call to acquire, one to release, none
	 * for a nested acquire. Measured with {@code INFO commandstats} over many cycles,
	 * after one cycle has loaded the scripts.
	 */
	@Test
	void anUncontendedCycleCostsExactlyTwoScriptCallsAndANestedAcquireNone() {
		String key = key();
		this.template.run(key, () -> {
		});
		int cycles = 200;
		Map<String, Long> before = TestRedis.commandCalls(redis);
		for (int i = 0; i < cycles; i++) {
			this.template.run(key, () -> this.template.run(key, () -> {
			}));
		}
		Map<String, Long> calls = callsSince(before);
		// The release subscription connects in the background on the first wait (hello,
		// client setname, subscribe: once per JVM, not per cycle). An uncontended release
		// publishes nothing.
		calls.keySet().removeAll(Set.of("hello", "client", "subscribe"));
		System.out.printf("Wire cost: %d lock+unlock cycles, each with one nested acquire: %s (%.2f per cycle)%n",
				cycles, calls, calls.values().stream().mapToLong(Long::longValue).sum() / (double) cycles);
		assertThat(calls).as("script calls (commandstats also counts the commands run inside scripts)")
			.containsEntry("evalsha", 2L * cycles)
			.doesNotContainKeys("eval", "script");
		assertThat(calls.keySet()).as("commands other than the scripts' own")
			.isSubsetOf("evalsha", "exists", "pttl", "incr", "time", "set", "pexpire", "get", "del");
	}

	/**
	 * Renewals are batched: 1,000 held locks cost a few script calls per renewal interval
	 * (one per batch, a batch holding every lease due within half an interval), not
	 * 1,000.
	 */
	@Test
	void renewingManyLocksCostsAFewScriptCallsPerIntervalNotOnePerLock() {
		Duration leaseTime = Duration.ofMillis(600);
		Duration interval = leaseTime.dividedBy(3);
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			leases.add(this.template.acquire(key(), lease(leaseTime, true)));
		}
		long pexpireBefore = TestRedis.commandCalls(redis, "pexpire");
		int intervals = 5;
		long scriptCalls = scriptCallsOver(interval.multipliedBy(intervals));
		long extensions = TestRedis.commandCalls(redis, "pexpire") - pexpireBefore;
		long renewalThreads = Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("distlock-renewal-"))
			.count();
		System.out.printf(
				"Batched renewal: 1000 locks over %d renewal intervals: %d script calls (%.1f per interval),"
						+ " %d lease extensions, %d renewal threads%n",
				intervals, scriptCalls, scriptCalls / (double) intervals, extensions, renewalThreads);
		assertThat(renewalThreads).as("renewal threads, over both templates' schedulers").isLessThanOrEqualTo(6);
		assertThat(extensions).as("lease extensions").isGreaterThanOrEqualTo(1000L * (intervals - 1));
		assertThat(scriptCalls).as("script calls for 1000 locks over %d intervals", intervals)
			.isLessThanOrEqualTo(4L * intervals);
		assertThat(leases).allMatch(Lease::isHeld);
		leases.forEach(Lease::release);
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

	/** Script calls the server received while this thread waited {@code period}. */
	private static long scriptCallsOver(Duration period) {
		long before = TestRedis.scriptCalls(redis);
		LockSupport.parkNanos(period.toNanos());
		return TestRedis.scriptCalls(redis) - before;
	}

	private static Optional<Lease> tryAcquireOnAnotherThread(DefaultLockTemplate template, String key)
			throws Exception {
		return CompletableFuture.supplyAsync(() -> template.tryAcquire(key, noWait()), TestThreads.EACH)
			.get(10, TimeUnit.SECONDS);
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		Conditions.await(what, timeout, condition);
	}

}
