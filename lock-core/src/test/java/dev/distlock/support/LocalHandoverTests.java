package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.handover.TakeOverGate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Local hand-over ("lock cohorting") on the in-memory store: a release passes the lock to
 * a waiting thread of the same template in memory, with the next token of the block the
 * store reserved, the lease's deadline and renewal carried over, a bound after which the
 * lock goes back to the store, and never a lease that was lost. Each template stands for
 * one JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalHandoverTests {

	/** Hand-over with a time bound longer than any of these tests. */
	private static final HandoverSettings PATIENT = new HandoverSettings(true, 32, Duration.ofMinutes(1));

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private DefaultLockTemplate template(HandoverSettings handover, Duration leaseTime, boolean autoRenew) {
		RenewalScheduler scheduler = this.closing.scheduler();
		return template(handover, leaseTime, autoRenew, scheduler);
	}

	private DefaultLockTemplate template(HandoverSettings handover, Duration leaseTime, boolean autoRenew,
			RenewalScheduler scheduler) {
		return template(handover, leaseTime, autoRenew, scheduler, TakeOverGate.OPEN);
	}

	private DefaultLockTemplate template(HandoverSettings handover, Duration leaseTime, boolean autoRenew,
			RenewalScheduler scheduler, TakeOverGate gate) {
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(30))
					.leaseTime(leaseTime)
					.autoRenew(autoRenew)
					.retryInterval(Duration.ofMillis(100))
					.build(),
				LeaseLossListener.NONE, false, LockObserver.NONE, handover, gate);
		this.closing.add(template);
		return template;
	}

	private DefaultLockTemplate template() {
		return template(HandoverSettings.ON, Duration.ofMinutes(1), true);
	}

	@AfterEach
	void close() throws Exception {
		this.threads.shutdownNow();
	}

	/** Another thread of {@code jvm} waits for {@code key}, parked between attempts. */
	private static CompletableFuture<Lease> waiting(DefaultLockTemplate jvm, String key, LockOptions options) {
		Waiter<Lease> waiter = Waiter.start("waiter", () -> jvm.acquire(key, options));
		Await.parked(waiter.thread);
		return waiter.result;
	}

	private static String key() {
		return "handover-" + UUID.randomUUID();
	}

	/**
	 * A holder of {@code key} in {@code jvm} that got the lock by a local hand-over, with
	 * the next token of the block.
	 */
	private static Lease handedOver(DefaultLockTemplate jvm, String key) throws Exception {
		Lease first = jvm.acquire(key, LockOptions.defaults());
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		first.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isEqualTo(first.fencingToken() + 1);
		return next;
	}

	@Test
	void theStoreReservesABlockOfTokens() {
		LockAttempt.Acquired first = (LockAttempt.Acquired) LockAttempt
			.join(this.store.tryLock(LockRequest.exclusive("block", Duration.ofMinutes(1)).withTokens(10)));
		TokenBlock block = (TokenBlock) first.handle();
		assertThat(block.lastToken()).isEqualTo(block.fencingToken() + 9);
		assertThat(block.release()).isTrue();
		LockAttempt.Acquired next = (LockAttempt.Acquired) LockAttempt
			.join(this.store.tryLock(LockRequest.exclusive("block", Duration.ofMinutes(1))));
		assertThat(next.handle().fencingToken()).isGreaterThan(block.lastToken());
	}

	/**
	 * Two JVMs of four threads each on one key: mutual exclusion, tokens that rise in the
	 * order the lock was held across both JVMs (a token handed over locally stays below
	 * any token the other JVM gets later), and both JVMs handed over locally.
	 */
	@Test
	void tokensRiseAcrossLocalHandOversAndJvms() throws Exception {
		String key = key();
		List<DefaultLockTemplate> jvms = List.of(template(), template());
		List<Long> tokens = new ArrayList<>();
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		for (DefaultLockTemplate jvm : jvms) {
			for (int t = 0; t < 4; t++) {
				workers.add(this.threads.submit(() -> {
					for (int i = 0; i < 500; i++) {
						jvm.run(key, () -> {
							if (inside.incrementAndGet() != 1) {
								overlap.set(true);
							}
							tokens.add(jvm.heldLockDetails().get(0).fencingToken());
							inside.decrementAndGet();
						});
					}
				}));
			}
		}
		for (Future<?> worker : workers) {
			worker.get(50, TimeUnit.SECONDS);
		}
		assertThat(overlap).isFalse();
		assertThat(tokens).hasSize(4000).isSorted().doesNotHaveDuplicates();
		assertThat(jvms.get(0).localHandovers()).isPositive();
		assertThat(jvms.get(1).localHandovers()).isPositive();
	}

	/**
	 * At most {@code maxPasses} local passes follow one store acquisition.
	 */
	@Test
	void theLockGoesBackToTheStoreAfterMaxPasses() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(new HandoverSettings(true, 3, Duration.ofMinutes(1)), Duration.ofMinutes(1),
				true);
		List<Long> tokens = new ArrayList<>();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			workers.add(this.threads.submit(() -> {
				for (int i = 0; i < 200; i++) {
					jvm.run(key, () -> tokens.add(jvm.heldLockDetails().get(0).fencingToken()));
				}
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(50, TimeUnit.SECONDS);
		}
		long passes = jvm.localHandovers();
		assertThat(passes).isPositive();
		assertThat(tokens).hasSize(1600).isSorted().doesNotHaveDuplicates();
		assertThat(passes).as("local passes against store acquisitions").isLessThanOrEqualTo(3 * (1600 - passes));
	}

	/**
	 * A lock passes locally at most {@code maxPasses} times in a row: the next waiter
	 * then takes it from the store, with a token of a new block.
	 */
	@Test
	void afterMaxPassesInARowTheNextHolderAsksTheStore() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(new HandoverSettings(true, 2, Duration.ofMinutes(1)), Duration.ofMinutes(1),
				true);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		Lease holder = first;
		List<Long> tokens = new ArrayList<>();
		for (int pass = 0; pass < 3; pass++) {
			CompletableFuture<Lease> next = waiting(jvm, key, LockOptions.defaults());
			holder.release();
			holder = next.get(10, TimeUnit.SECONDS);
			tokens.add(holder.fencingToken());
		}
		holder.release();
		assertThat(jvm.localHandovers()).isEqualTo(2);
		assertThat(tokens.subList(0, 2)).containsExactly(first.fencingToken() + 1, first.fencingToken() + 2);
		assertThat(tokens.get(2)).isGreaterThan(first.fencingToken() + 2);
	}

	/**
	 * A release later than {@code maxTime} after the store acquisition goes to the store,
	 * even with passes left.
	 */
	@Test
	void aReleaseAfterMaxTimeGoesToTheStore() throws Exception {
		String key = key();
		Duration maxTime = Duration.ofMillis(50);
		DefaultLockTemplate jvm = template(new HandoverSettings(true, 32, maxTime), Duration.ofMinutes(1), true);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		// After the acquire returned: the bound counts from when the acquire was sent.
		// Taken before the acquire, a slow acquire left the bound unpassed (seen red).
		long acquired = System.nanoTime();
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		// The condition is the time bound itself.
		Await.until("the time bound has passed", Duration.ofSeconds(10),
				() -> System.nanoTime() - acquired > maxTime.toNanos());
		first.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(jvm.localHandovers()).isZero();
		assertThat(next.fencingToken()).isGreaterThan(first.fencingToken() + 32);
		next.release();
	}

	/**
	 * A waiter of another JVM gets the lock while eight threads of this JVM hammer it, as
	 * soon as the bound of {@code maxTime} is reached. The pass bound is set far too high
	 * to end a run by itself within the waiter's wait time: only the time bound can.
	 */
	@Test
	void aRemoteWaiterGetsTheLockWithinTheTimeBound() throws Exception {
		String key = key();
		DefaultLockTemplate hammered = template(new HandoverSettings(true, 1_000_000, Duration.ofMillis(20)),
				Duration.ofMinutes(1), true);
		DefaultLockTemplate remote = template();
		AtomicBoolean stop = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			workers.add(this.threads.submit(() -> {
				while (!stop.get()) {
					hammered.run(key, () -> {
					});
				}
			}));
		}
		Await.until("hand-overs under way", Duration.ofSeconds(20), () -> hammered.localHandovers() > 1000);
		for (int round = 0; round < 3; round++) {
			try (Lease lease = remote.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build())) {
				assertThat(lease.isHeld()).isTrue();
			}
		}
		stop.set(true);
		for (Future<?> worker : workers) {
			worker.get(20, TimeUnit.SECONDS);
		}
	}

	/**
	 * The lease deadline carries over: the next holder's lease runs out when the store
	 * lease taken by the first one does, not one lease time after the hand-over.
	 */
	@Test
	void theDeadlineCarriesOver() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMinutes(1), false);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		Duration firstRemaining = jvm.heldLockDetails().get(0).remainingLease();
		// Read after the remaining lease, so that the wait below is a lower bound on how
		// far
		// the lease ran on since it was read.
		long measured = System.nanoTime();
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		// The lease must have run on by a measurable amount before the hand-over.
		Duration ranOn = Duration.ofMillis(100);
		Await.until("the lease ran on", Duration.ofSeconds(10), () -> System.nanoTime() - measured > ranOn.toNanos());
		first.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(jvm.localHandovers()).isEqualTo(1);
		assertThat(next.fencingToken()).isEqualTo(first.fencingToken() + 1);
		assertThat(jvm.heldLockDetails().get(0).remainingLease()).isLessThanOrEqualTo(firstRemaining.minus(ranOn));
		next.release();
	}

	/**
	 * Renewal carries over: a lease handed over goes on being renewed, for several lease
	 * times, and stays held.
	 */
	@Test
	void renewalCarriesOver() throws Exception {
		String key = key();
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMillis(300), true, scheduler);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		first.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isEqualTo(first.fencingToken() + 1);
		long batches = scheduler.batches();
		Await.until("four renewals", Duration.ofSeconds(20), () -> scheduler.batches() >= batches + 4);
		assertThat(next.isHeld()).isTrue();
		next.release();
		assertThat(scheduler.pendingTasks()).isZero();
	}

	/**
	 * A lease found lost is never handed on, even with a thread of its JVM waiting: the
	 * waiter takes the lock from the store after the other JVM that took it over, with a
	 * greater token.
	 */
	@Test
	void aLostLeaseIsNeverHandedOn() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMillis(600), true);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		// Another JVM takes the lock once it expires: the renewal finds it another's.
		assertThat(this.store.expire(key)).isTrue();
		Lease other = template().acquire(key, LockOptions.defaults());
		Await.until("the loss is found", Duration.ofSeconds(20), () -> !first.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(first::release);
		other.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(jvm.localHandovers()).isZero();
		assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
		next.release();
	}

	/**
	 * A lock lost after it was handed over is found lost by the new holder: the store
	 * lease (now another JVM's) is what its renewal checks.
	 */
	@Test
	void aLossAfterHandOverReachesTheNewHolder() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMillis(600), true);
		Lease next = handedOver(jvm, key);
		assertThat(this.store.expire(key)).isTrue();
		Lease other = template().acquire(key, LockOptions.defaults());
		Await.until("the new holder finds the loss", Duration.ofSeconds(20), () -> !next.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(next::release);
		assertThat(other.fencingToken()).isGreaterThan(next.fencingToken());
		other.release();
	}

	/**
	 * The store loses the lock (an eviction) while this JVM passes it among its threads,
	 * and another JVM takes it. The holder then in place is told at its release, and a
	 * thread that asked after the other JVM took the lock never gets a token of the old
	 * block: it waits for that JVM and gets a greater token. (Without the owner check
	 * after a hand-over, the release returned quietly.)
	 */
	@Test
	void aLockTheStoreLostIsToldToItsHolderAndNeverHandedToALaterRequest() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMinutes(1), true);
		Lease held = handedOver(jvm, key);
		assertThat(this.store.expire(key)).isTrue();
		Lease other = template().acquire(key, LockOptions.defaults());
		CompletableFuture<Lease> late = waiting(jvm, key, LockOptions.defaults());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(held::release);
		other.release();
		Lease next = late.get(10, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
		next.release();
	}

	/**
	 * The store loses the lock while two threads of this JVM wait for it, both asked
	 * before the last owner check that found it held, so neither needs a check of its
	 * own. The first takes it over; after the loss, its release hands on to the second,
	 * and that release's owner check finds the lock lost. The second thread, taking over
	 * only after that (held back at its take-over by the gate), never gets a token of the
	 * old block, as held or already lost: it gets the lock from the store after the other
	 * JVM, with a greater token.
	 */
	@Test
	void aThreadThatAskedEarlyNeverTakesOverALockFoundLost() throws Exception {
		String key = key();
		AtomicInteger takeOvers = new AtomicInteger();
		CountDownLatch lossFound = new CountDownLatch(1);
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate jvm = template(PATIENT, Duration.ofMinutes(1), true, scheduler, (taken) -> {
			if (taken.equals(key) && takeOvers.incrementAndGet() == 2) {
				// Untimed, so that the thread held here is told from one parked between
				// attempts at the store.
				try {
					lossFound.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		});
		Lease first = jvm.acquire(key, LockOptions.defaults());
		Waiter<Lease> one = Waiter.start("one", () -> jvm.acquire(key, LockOptions.defaults()));
		Await.parked(one.thread);
		Waiter<Lease> two = Waiter.start("two", () -> jvm.acquire(key, LockOptions.defaults()));
		Await.parked(two.thread);
		try {
			first.release();
			CompletableFuture.anyOf(one.result, two.result).get(10, TimeUnit.SECONDS);
			Waiter<Lease> early = one.result.isDone() ? two : one;
			Lease handed = (early == two) ? one.result.get() : two.result.get();
			assertThat(handed.fencingToken()).isEqualTo(first.fencingToken() + 1);
			assertThat(this.store.expire(key)).isTrue();
			Lease other = template().acquire(key, LockOptions.defaults());
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(handed::release);
			// The early thread, woken by the hand-over, may reach the take-over before or
			// after the check answered; either way it is held there until now.
			Await.until("the early thread at its take-over", Duration.ofSeconds(10), () -> takeOvers.get() == 2);
			lossFound.countDown();
			Await.until("the early thread back at the store, or done", Duration.ofSeconds(10),
					() -> early.result.isDone() || early.thread.getState() == Thread.State.TIMED_WAITING);
			assertThat(early.result).as("the early thread, while the other JVM holds the lock").isNotDone();
			other.release();
			Lease next = early.result.get(10, TimeUnit.SECONDS);
			assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
			assertThat(jvm.localHandovers()).isOne();
			next.release();
		}
		finally {
			lossFound.countDown();
		}
	}

	@Test
	void withHandOverOffEveryHolderAsksTheStore() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template(HandoverSettings.OFF, Duration.ofMinutes(1), true);
		Lease first = jvm.acquire(key, LockOptions.defaults());
		CompletableFuture<Lease> second = waiting(jvm, key, LockOptions.defaults());
		first.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(jvm.localHandovers()).isZero();
		assertThat(next.fencingToken()).isEqualTo(first.fencingToken() + 1);
		next.release();
	}

	@Test
	void fairLocksAreNeverHandedOver() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = template();
		LockOptions fair = LockOptions.builder().fair(true).build();
		Lease first = jvm.acquire(key, fair);
		CompletableFuture<Lease> second = waiting(jvm, key, fair);
		first.release();
		second.get(10, TimeUnit.SECONDS).release();
		assertThat(jvm.localHandovers()).isZero();
	}

	@Test
	void badSettingsAreRejectedNamingTheProperty() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new HandoverSettings(true, -1, Duration.ofMillis(10)))
			.withMessageContaining("distributed-lock.handover.max-passes");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new HandoverSettings(true, 1, Duration.ZERO))
			.withMessageContaining("distributed-lock.handover.max-time");
	}

}
