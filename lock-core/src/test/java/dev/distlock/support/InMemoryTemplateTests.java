package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DefaultLockTemplate} on the in-memory store: re-entry inside a scope only, the
 * watchdog, no renewal after release, loss detection, the late-reply rule and shutdown.
 * Two templates on one store stand for two JVMs on one Redis.
 *
 * <p>
 * Where a test must show that something does <em>not</em> happen for a while (the lock is
 * not lost, no renewal is sent), the passing of time is itself the condition, stated in
 * lease periods.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InMemoryTemplateTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	/** Each template's renewal scheduler. */
	private final Map<DefaultLockTemplate, RenewalScheduler> schedulers = new IdentityHashMap<>();

	/** Losses the templates' listener heard of: key, holder thread, reason. */
	private final List<String> losses = new CopyOnWriteArrayList<>();

	/** This JVM's template. */
	private final DefaultLockTemplate template = template(this.store);

	/** Another JVM's template on the same store. */
	private final DefaultLockTemplate other = template(this.store);

	private DefaultLockTemplate template(LockProvider provider) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build(),
				(lease, reason, holder) -> this.losses
					.add(lease.key() + " held by " + ((holder != null) ? holder.getName() : "none") + ": " + reason),
				false);
		this.schedulers.put(template, scheduler);
		return template;
	}

	private RenewalScheduler scheduler(DefaultLockTemplate template) {
		return this.schedulers.get(template);
	}

	private static String key() {
		return "template-" + UUID.randomUUID();
	}

	private static LockOptions noWait() {
		return LockOptions.builder().waitTime(Duration.ZERO).build();
	}

	private static LockOptions lease(Duration leaseTime, boolean autoRenew) {
		return LockOptions.builder().leaseTime(leaseTime).autoRenew(autoRenew).build();
	}

	@Test
	void theHolderReentersInsideItsScopeAndTheLockIsFreeOnlyAfterTheOutermostRelease() throws Exception {
		String key = key();
		Lease outer = this.template.acquire(key, noWait());
		try (LockContext.Scope scope = LockContext.open(outer)) {
			Lease inner = this.template.acquire(key, noWait());
			assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
			this.template.run(key, noWait(),
					() -> assertThat(LockContext.held()).as("scopes: the outer lease's and run's")
						.hasSize(2)
						.allSatisfy((held) -> assertThat(held.fencingToken()).isEqualTo(outer.fencingToken())));
			inner.release();
		}
		assertThat(outer.isHeld()).isTrue();
		assertThat(this.other.tryAcquire(key, noWait())).as("other JVM after the inner releases").isEmpty();
		assertThat(onAnotherThread(() -> this.template.tryAcquire(key, noWait()))).as("other thread of this JVM")
			.isEmpty();
		outer.release();
		assertThat(this.store.storedKeys()).as("keys left in the store").isZero();
		this.other.tryAcquire(key, noWait()).orElseThrow().release();
	}

	@Test
	void aLeaseHandedToAnotherThreadNeverLetsItsAcquiringThreadBackIn() throws Exception {
		String key = key();
		Lease lease = this.template.acquire(key, LockOptions.defaults());
		CountDownLatch releaseNow = new CountDownLatch(1);
		Waiter<Void> worker = Waiter.start("lease-worker", () -> {
			try (LockContext.Scope scope = LockContext.open(lease)) {
				releaseNow.await();
			}
			lease.release();
			return null;
		});
		assertThat(this.template.tryAcquire(key, noWait())).as("the acquiring thread while the worker uses the lease")
			.isEmpty();
		releaseNow.countDown();
		worker.result.get(10, TimeUnit.SECONDS);
		Lease next = this.template.acquire(key, noWait());
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		next.release();
	}

	@Test
	void aSecondAcquireOnTheSameThreadOutsideAnyScopeWaitsAndSaysWhy() {
		String key = key();
		Lease lease = this.template.acquire(key, noWait());
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(
					() -> this.template.acquire(key, LockOptions.builder().waitTime(Duration.ofMillis(100)).build()))
			.withMessageContaining("not re-entrant")
			.withMessageContaining("LockContext.open(lease)");
		lease.release();
	}

	@Test
	@Tag("slow")
	void theWatchdogKeepsTheLockAcrossSeveralLeases() {
		String key = key();
		// Renewal runs at a third of the lease: a lease of a second leaves room for a
		// renewal delayed by a busy machine, which is not what this test is about.
		Duration leaseTime = Duration.ofSeconds(1);
		Lease lease = this.template.acquire(key, lease(leaseTime, true));
		long end = System.nanoTime() + leaseTime.multipliedBy(3).toNanos();
		while (System.nanoTime() - end < 0) {
			assertThat(this.other.tryAcquire(key, noWait())).as("other JVM while renewed").isEmpty();
			assertThat(lease.isHeld()).isTrue();
			LockSupport.parkNanos(leaseTime.toNanos() / 10);
		}
		lease.release();
		assertThat(this.losses).isEmpty();
	}

	@Test
	void noRenewalIsScheduledOrSentAfterRelease() {
		ObservedProvider observed = new ObservedProvider();
		DefaultLockTemplate template = template(observed);
		RenewalScheduler scheduler = scheduler(template);
		Duration leaseTime = Duration.ofMillis(90);
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			leases.add(template.acquire(key(), lease(leaseTime, true)));
		}
		assertThat(scheduler.pendingTasks()).isEqualTo(20);
		assertThat(scheduler.pendingDeadlineChecks()).isEqualTo(20);
		Await.until("every lease renewed", Duration.ofSeconds(5), () -> observed.renewals.get() >= 20);
		leases.forEach(Lease::release);
		assertThat(scheduler.pendingTasks()).as("renewals left after release").isZero();
		assertThat(scheduler.pendingDeadlineChecks()).as("deadline checks left after release").isZero();
		int renewalsAtRelease = observed.renewals.get();
		LockSupport.parkNanos(leaseTime.multipliedBy(4).toNanos());
		assertThat(observed.renewals.get()).as("renewals over four lease periods after release")
			.isEqualTo(renewalsAtRelease);
		assertThat(observed.store.storedKeys()).isZero();
	}

	/**
	 * The lock is taken from its holder (its lease ended in the store, and another owner
	 * took it): the watchdog finds out, the holder's scope thread is named once to the
	 * listener, and the holder's release neither succeeds nor touches the new owner's
	 * lock.
	 */
	@Test
	void aLockTakenOverBehindTheHoldersBackIsReportedLostOnceAndItsReleaseLeavesTheNewOwnersLock() throws Exception {
		String key = key();
		List<Optional<Lease>> taken = new CopyOnWriteArrayList<>();
		Waiter<Boolean> holder = Waiter.start("scope-thread",
				() -> this.template.execute(key, lease(Duration.ofMillis(300), true), () -> {
					Lease lease = LockContext.current().orElseThrow();
					assertThat(this.store.expire(key)).isTrue();
					taken.add(this.other.tryAcquire(key, noWait()));
					Await.until("the loss is found", Duration.ofSeconds(5), () -> !lease.isHeld());
					return lease.isHeld();
				}));
		assertThat(holder.result).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LeaseLostException.class)
			.withMessageContaining("renewal found the key expired or held by another owner");
		// The lease turns lost first; the listener hears of it right after, on the
		// renewal's thread.
		Await.until("the loss listener told", Duration.ofSeconds(5), () -> !this.losses.isEmpty());
		assertThat(this.losses).hasSize(1).first().asString().startsWith(key + " held by scope-thread");
		Lease current = taken.get(0).orElseThrow();
		assertThat(current.isHeld()).as("the new owner's lease after the old one's release").isTrue();
		assertThat(this.template.tryAcquire(key, noWait())).isEmpty();
		current.release();
		assertThat(this.scheduler(this.template).pendingTasks()).isZero();
	}

	@Test
	void withoutAutoRenewTheLeaseRunsOutAndIsReportedLost() {
		String key = key();
		Lease stale = this.template.acquire(key, lease(Duration.ofMillis(200), false));
		assertThat(this.scheduler(this.template).pendingTasks()).as("renewals without auto-renew").isZero();
		Lease current = this.other.acquire(key, LockOptions.defaults());
		assertThat(current.fencingToken()).isGreaterThan(stale.fencingToken());
		assertThat(stale.isHeld()).isFalse();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(stale::release)
			.withMessageContaining("ran out without renewal");
		assertThat(current.isHeld()).isTrue();
		current.release();
	}

	@Test
	void executeReleasesOnEveryPathAndLetsTheActionsExceptionThrough() {
		String key = key();
		assertThat(this.template.execute(key, () -> "result")).isEqualTo("result");
		assertThat(this.store.storedKeys()).isZero();
		IllegalStateException failure = new IllegalStateException("boom");
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.template.run(key, () -> {
			throw failure;
		})).isSameAs(failure);
		assertThat(this.store.storedKeys()).isZero();
		assertThat(this.template.heldLocks()).isZero();
		assertThat(this.scheduler(this.template).pendingTasks()).isZero();
	}

	/**
	 * An acquire whose reply comes back after the lease could have run out does not
	 * count: the late lock is released and the caller tries again.
	 */
	@Test
	void anAcquireReplyThatArrivesAfterItsLeaseCouldHaveExpiredDoesNotCount() {
		ObservedProvider observed = new ObservedProvider();
		DefaultLockTemplate template = template(observed);
		observed.answerNextAcquireLate = true;
		Lease lease = template.acquire(key(), lease(Duration.ofMillis(100), true));
		assertThat(observed.lateToken).as("the late acquisition happened").isPositive();
		assertThat(lease.fencingToken()).as("the lease counted").isGreaterThan(observed.lateToken);
		assertThat(lease.isHeld()).isTrue();
		Await.until("the late lock is released", Duration.ofSeconds(5), () -> observed.lateReleases.get() == 1);
		lease.release();
	}

	/**
	 * Shutdown while a holder is still running declares its lease lost: the holder's
	 * {@code isHeld()} turns false, the listener names it, its own release throws, and
	 * the lock is free at once for others.
	 */
	@Test
	void shutdownDeclaresTheLeaseOfAHolderStillRunningLost() throws Exception {
		String key = key();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch closed = new CountDownLatch(1);
		Waiter<Boolean> holder = Waiter.start("still-running", () -> this.template.execute(key, () -> {
			holding.countDown();
			await(closed);
			return LockContext.current().orElseThrow().isHeld();
		}));
		await(holding);
		this.template.close();
		assertThat(this.other.tryAcquire(key, noWait())).as("the lock after shutdown")
			.hasValueSatisfying(Lease::release);
		closed.countDown();
		assertThat(holder.result).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LeaseLostException.class)
			.withMessageContaining("shut down");
		assertThat(this.losses).hasSize(1).first().asString().startsWith(key + " held by still-running");
		Await.until("the lease is forgotten", Duration.ofSeconds(5), () -> this.template.heldLocks() == 0);
	}

	/**
	 * With {@code on-lease-lost: interrupt}, a loss interrupts the thread running the
	 * lease's scope.
	 */
	@Test
	void aLossInterruptsTheScopeThreadWhenAskedTo() throws Exception {
		String key = key();
		CountDownLatch inScope = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		Waiter<Boolean> holder = Waiter.start("interrupted-holder", () -> this.template.execute(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(300)).onLeaseLost(OnLeaseLost.INTERRUPT).build(),
				() -> {
					inScope.countDown();
					try {
						Thread.sleep(30_000);
					}
					catch (InterruptedException ex) {
						interrupted.set(true);
					}
					return interrupted.get();
				}));
		await(inScope);
		this.store.expire(key);
		assertThat(holder.result).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LeaseLostException.class);
		assertThat(interrupted).as("the scope thread was interrupted").isTrue();
		// The holder is interrupted first; the listener hears of the loss right after.
		Await.until("the loss listener told", Duration.ofSeconds(5), () -> !this.losses.isEmpty());
		assertThat(this.losses).hasSize(1).first().asString().startsWith(key + " held by interrupted-holder");
	}

	private static <T> T onAnotherThread(Supplier<T> task) throws Exception {
		return Waiter.start("other-thread", task::get).result.get(10, TimeUnit.SECONDS);
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(10, TimeUnit.SECONDS)).as("latch released in time").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
