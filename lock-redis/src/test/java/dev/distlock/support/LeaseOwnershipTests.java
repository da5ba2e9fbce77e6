package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Who holds a lease once it leaves the thread that acquired it, what a waiter of the same
 * JVM does when the holder's lease runs out, and what shutdown tells holders that are
 * still running.
 */
@Tag("server")
class LeaseOwnershipTests {

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	private RenewalScheduler scheduler;

	private DefaultLockTemplate template;

	private final List<String> lossEvents = new CopyOnWriteArrayList<>();

	private final ExecutorService workers = Executors.newCachedThreadPool();

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

	@BeforeEach
	void createTemplate() {
		this.scheduler = new RenewalScheduler();
		this.template = new DefaultLockTemplate(new RedisLockProvider(factory, "lock:", false), this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ZERO)
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build(),
				(lease, reason, holder) -> this.lossEvents
					.add(lease.key() + " held by " + ((holder != null) ? holder.getName() : "none")),
				true);
	}

	@AfterEach
	void close() {
		this.workers.shutdownNow();
		this.scheduler.close();
	}

	private static String key() {
		return "ownership-" + UUID.randomUUID();
	}

	/**
	 * Issue: thread P acquires, hands the lease to worker Q and then, as a pool thread,
	 * locks the same key for another task. P must wait like any other thread: it got in
	 * at once, with the same fencing token, before re-entry was tied to the lease's
	 * scope.
	 */
	@Test
	void aLeaseHandedToAnotherThreadNeverLetsItsAcquiringThreadBackIn() throws Exception {
		String key = key();
		Lease lease = this.template.acquire(key, LockOptions.defaults());
		CountDownLatch releaseNow = new CountDownLatch(1);
		CompletableFuture<Void> worker = CompletableFuture.runAsync(() -> {
			try (LockContext.Scope scope = LockContext.open(lease)) {
				await(releaseNow);
			}
			lease.release();
		}, this.workers);
		Optional<Lease> again = this.template.tryAcquire(key, LockOptions.defaults());
		assertThat(again).as("the acquiring thread's second acquire while the worker holds the lease").isEmpty();
		releaseNow.countDown();
		worker.get(10, TimeUnit.SECONDS);
		Lease next = this.template.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build());
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		next.release();
	}

	/**
	 * The same thread, no hand-over: outside a scope, a second acquire is not re-entry.
	 */
	@Test
	void aSecondAcquireOnTheSameThreadOutsideAnyScopeWaitsAndSaysWhy() {
		String key = key();
		Lease lease = this.template.acquire(key, LockOptions.defaults());
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(
					() -> this.template.acquire(key, LockOptions.builder().waitTime(Duration.ofMillis(200)).build()))
			.withMessageContaining("not re-entrant")
			.withMessageContaining("LockContext.open(lease)");
		try (LockContext.Scope scope = LockContext.open(lease)) {
			Lease nested = this.template.acquire(key, LockOptions.defaults());
			assertThat(nested.fencingToken()).isEqualTo(lease.fencingToken());
			nested.release();
		}
		assertThat(lease.isHeld()).isTrue();
		lease.release();
	}

	/**
	 * With {@code on-lease-lost: interrupt}, a loss interrupts the thread that runs the
	 * lease's scope now, not the one that acquired it, and the loss names that thread.
	 */
	@Test
	void aLossInterruptsAndNamesTheThreadUsingTheLeaseNotTheOneThatAcquiredIt() throws Exception {
		String key = key();
		Lease lease = this.template.acquire(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(600)).onLeaseLost(OnLeaseLost.INTERRUPT).build());
		AtomicBoolean workerInterrupted = new AtomicBoolean();
		CountDownLatch inScope = new CountDownLatch(1);
		CompletableFuture<Void> worker = CompletableFuture.runAsync(() -> {
			Thread.currentThread().setName("lease-worker");
			try (LockContext.Scope scope = LockContext.open(lease)) {
				inScope.countDown();
				Thread.sleep(30_000);
			}
			catch (InterruptedException ex) {
				workerInterrupted.set(true);
			}
		}, this.workers);
		await(inScope);
		redis.delete("lock:" + key);
		worker.get(10, TimeUnit.SECONDS);
		assertThat(workerInterrupted).as("worker interrupted").isTrue();
		assertThat(Thread.interrupted()).as("acquiring thread interrupted").isFalse();
		// The holder is interrupted first; the listener hears of the loss right after.
		Conditions.await("the loss listener told", Duration.ofSeconds(5), () -> !this.lossEvents.isEmpty());
		assertThat(this.lossEvents).containsExactly(key + " held by lease-worker");
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
	}

	/**
	 * Issue: with lease 1 s, no renewal and a retry interval of a minute, a waiter in
	 * another JVM got the lock after about a second, but one in the same JVM only when
	 * the holder released it. The local waiter never sleeps past the holder's deadline.
	 */
	@Test
	void aLocalWaiterTakesTheLockWhenTheHoldersUnrenewedLeaseRunsOut() throws Exception {
		String key = key();
		Lease holder = this.template.acquire(key,
				LockOptions.builder().leaseTime(Duration.ofSeconds(1)).autoRenew(false).build());
		LockOptions patient = LockOptions.builder()
			.waitTime(Duration.ofSeconds(20))
			.retryInterval(Duration.ofMinutes(1))
			.build();
		long start = System.nanoTime();
		CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> this.template.acquire(key, patient),
				this.workers);
		Lease next = waiter.get(30, TimeUnit.SECONDS);
		Duration waited = Duration.ofNanos(System.nanoTime() - start);
		assertThat(waited).as("the waiter's wait (holder's lease 1s, retry interval 1m, wait 20s)")
			.isLessThan(Duration.ofSeconds(5));
		assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
		assertThat(holder.isHeld()).isFalse();
		next.release();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(holder::release);
	}

	/**
	 * Issue: shutdown released the locks of holders still running, and told them nothing.
	 * Now the holder is told, as of any loss: {@code isHeld()} turns false, the loss
	 * listener hears of it, and its own release throws.
	 */
	@Test
	void shutdownTellsAHolderThatIsStillRunningThatItsLeaseIsGone() throws Exception {
		String key = key();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch closed = new CountDownLatch(1);
		AtomicBoolean heldAfterShutdown = new AtomicBoolean(true);
		CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> {
			Thread.currentThread().setName("still-running");
			this.template.run(key, () -> {
				holding.countDown();
				await(closed);
				heldAfterShutdown.set(LockContext.current().get().isHeld());
			});
		}, this.workers);
		await(holding);
		this.template.close();
		assertThat(redis.hasKey("lock:" + key)).as("lock deleted at shutdown").isFalse();
		closed.countDown();
		assertThat(holder).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(java.util.concurrent.ExecutionException.class)
			.withCauseInstanceOf(LeaseLostException.class)
			.withMessageContaining("shut down");
		assertThat(heldAfterShutdown).as("isHeld() in the body after shutdown").isFalse();
		assertThat(this.lossEvents).containsExactly(key + " held by still-running");
		Conditions.await("the lease is forgotten", Duration.ofSeconds(5), () -> this.template.heldLocks() == 0);
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("latch not released in time");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
