package dev.distlock.support;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.inmemory.InMemoryLockProvider;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DefaultAsyncLockTemplate} on the in-memory store: the action runs only while the
 * lock is held and alone, the lock is released exactly once when the action's stage ends
 * (normally, exceptionally or by cancellation) and before the caller hears of it, a loss
 * fails the stage, a wait that runs out fails naming the key, and waiting holds no
 * thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncLockTemplateTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	private final ReleaseCounter releases = new ReleaseCounter();

	private final DefaultLockTemplate template = template(this.releases);

	private final DefaultAsyncLockTemplate async = new DefaultAsyncLockTemplate(this.template);

	/** A template standing for another JVM on the same store. */
	private final DefaultLockTemplate other = template(LockObserver.NONE);

	private final ExecutorService worker = Executors.newSingleThreadExecutor();

	private DefaultLockTemplate template(LockObserver observer) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build(),
				LeaseLossListener.NONE, true, observer);
		this.closing.add(template);
		return template;
	}

	@AfterEach
	void close() throws Exception {
		this.worker.shutdownNow();
	}

	private static String key() {
		return "async-template-" + UUID.randomUUID();
	}

	private static LockOptions noWait() {
		return LockOptions.builder().waitTime(Duration.ZERO).build();
	}

	private boolean heldElsewhere(String key) {
		Optional<Lease> lease = this.other.tryAcquire(key, noWait());
		lease.ifPresent(Lease::release);
		return lease.isEmpty();
	}

	/**
	 * Two templates, each with many async callers on one key, and actions that end later
	 * on another thread: never two inside at once, fencing tokens strictly increasing.
	 */
	@Test
	void asyncHoldersOfOneKeyExcludeEachOther() throws Exception {
		String key = key();
		DefaultAsyncLockTemplate second = new DefaultAsyncLockTemplate(this.other);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokens = new java.util.concurrent.CopyOnWriteArrayList<>();
		List<CompletableFuture<Integer>> runs = new ArrayList<>();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofSeconds(30)).build();
		for (int i = 0; i < 100; i++) {
			DefaultAsyncLockTemplate caller = (i % 2 == 0) ? this.async : second;
			int index = i;
			runs.add(caller.execute(key, patient, () -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				tokens.add(LockContext.current().orElseThrow().fencingToken());
				return CompletableFuture.supplyAsync(() -> {
					inside.decrementAndGet();
					return index;
				}, this.worker);
			}));
		}
		for (int i = 0; i < runs.size(); i++) {
			assertThat(runs.get(i).get(30, TimeUnit.SECONDS)).isEqualTo(i);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(tokens).hasSize(100).isSorted().doesNotHaveDuplicates();
		assertThat(this.store.storedKeys()).isZero();
	}

	/**
	 * While another holder has the lock, the action is not started; once freed, it is.
	 */
	@Test
	void theActionStartsOnlyOnceTheLockIsHeld() throws Exception {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		AtomicBoolean heldWhenStarted = new AtomicBoolean();
		CompletableFuture<String> run = this.async.execute(key, () -> {
			started.set(true);
			heldWhenStarted.set(LockContext.current().orElseThrow().isHeld() && heldElsewhere(key));
			return CompletableFuture.completedFuture("done");
		});
		Await.until("the caller waits in line", Duration.ofSeconds(10),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == 1);
		assertThat(started).as("started while another holder had the lock").isFalse();
		held.release();
		assertThat(run.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(started).isTrue();
		assertThat(heldWhenStarted).isTrue();
	}

	/**
	 * The lock stays held while the action's stage is pending, and is free by the time
	 * the caller's stage completes: released once.
	 */
	@Test
	void aSuccessReleasesTheLockOnceBeforeTheCallerHears() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, () -> work);
		assertThat(heldElsewhere(key)).as("held while the action runs").isTrue();
		CompletableFuture<Boolean> freeWhenDone = run.thenApply((value) -> !heldElsewhere(key));
		work.complete("result");
		assertThat(run.get(10, TimeUnit.SECONDS)).isEqualTo("result");
		assertThat(freeWhenDone.get(10, TimeUnit.SECONDS)).as("free when the caller hears").isTrue();
		assertThat(this.releases.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
	}

	/** A failed action: its own exception reaches the caller, after one release. */
	@Test
	void aFailureReleasesTheLockOnceAndReachesTheCallerUnchanged() throws Exception {
		String key = key();
		IllegalStateException failure = new IllegalStateException("boom");
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, () -> work);
		CompletableFuture<Boolean> freeWhenDone = run.handle((value, ex) -> !heldElsewhere(key));
		work.completeExceptionally(failure);
		assertThat(failureOf(run)).isSameAs(failure);
		assertThat(freeWhenDone.get(10, TimeUnit.SECONDS)).as("free when the caller hears").isTrue();
		assertThat(this.releases.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
	}

	/**
	 * An action that throws instead of returning a stage: released, and its exception.
	 */
	@Test
	void anActionThatThrowsReleasesTheLock() throws Exception {
		String key = key();
		IllegalArgumentException failure = new IllegalArgumentException("bad");
		CompletableFuture<String> run = this.async.execute(key, () -> {
			throw failure;
		});
		assertThat(failureOf(run)).isSameAs(failure);
		assertThat(heldElsewhere(key)).isFalse();
		assertThat(this.releases.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
	}

	/**
	 * Cancelling the caller's stage while the action runs frees the lock at once, once,
	 * and cancels the action's stage.
	 */
	@Test
	void cancellingARunningActionReleasesTheLockOnce() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, () -> work);
		assertThat(heldElsewhere(key)).isTrue();
		run.cancel(false);
		assertThat(work).isCancelled();
		// Released right after the cancel, on one of the template's workers.
		Await.until("released after cancel", Duration.ofSeconds(10), () -> !this.releases.of(key).isEmpty());
		assertThat(heldElsewhere(key)).as("held after cancel").isFalse();
		assertThat(this.releases.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
		assertThat(this.template.heldLocks()).isZero();
	}

	/**
	 * Cancelling the caller's stage frees the lock even when the action's stage cannot be
	 * cancelled and ends only later; its end releases nothing more.
	 */
	@Test
	void cancellingReleasesTheLockOnceEvenIfTheActionsStageRunsOn() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, work::minimalCompletionStage);
		assertThat(heldElsewhere(key)).isTrue();
		run.cancel(false);
		Await.until("released after cancel", Duration.ofSeconds(10), () -> !this.releases.of(key).isEmpty());
		assertThat(heldElsewhere(key)).as("held after cancel").isFalse();
		work.complete("late");
		assertThat(this.releases.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
		assertThat(this.template.heldLocks()).isZero();
	}

	/** Cancelling while still waiting: the action never runs and no lock is left held. */
	@Test
	void cancellingAWaitLeavesNoLockAndNeverRunsTheAction() throws Exception {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		CompletableFuture<String> run = this.async.execute(key, () -> {
			started.set(true);
			return new CompletableFuture<>();
		});
		Await.until("the caller waits in line", Duration.ofSeconds(10),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == 1);
		run.cancel(false);
		Await.until("the wait left the line", Duration.ofSeconds(10), () -> this.template.queuedKeys() == 0);
		held.release();
		assertThat(heldElsewhere(key)).isFalse();
		assertThat(started).isFalse();
		assertThat(this.template.heldLocks()).isZero();
	}

	/** A lease lost while the action runs fails the caller's stage once it ends. */
	@Test
	void aLeaseLostWhileTheActionRunsFailsTheStage() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, () -> work);
		assertThat(this.store.expire(key)).isTrue();
		work.complete("result");
		assertThat(failureOf(run)).isInstanceOf(LeaseLostException.class).hasMessageContaining(key);
	}

	/** A loss and a failure of the action: the action's failure, the loss suppressed. */
	@Test
	void aLeaseLostWhileTheActionFailsIsAddedToItsFailure() throws Exception {
		String key = key();
		IllegalStateException failure = new IllegalStateException("boom");
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = this.async.execute(key, () -> work);
		assertThat(this.store.expire(key)).isTrue();
		work.completeExceptionally(failure);
		assertThat(failureOf(run)).isSameAs(failure);
		assertThat(failure.getSuppressed()).hasSize(1).hasOnlyElementsOfType(LeaseLostException.class);
	}

	/**
	 * A lease from {@code acquire} given back through the template: the key is free once
	 * the stage completes, a second release is a no-op, and a lease lost while held fails
	 * the stage.
	 */
	@Test
	void releaseGivesTheKeyBackAndReportsALoss() throws Exception {
		String key = key();
		Lease lease = this.async.acquire(key, LockOptions.defaults()).get(10, TimeUnit.SECONDS);
		this.async.release(lease).toCompletableFuture().get(10, TimeUnit.SECONDS);
		assertThat(heldElsewhere(key)).isFalse();
		assertThat(lease.isHeld()).isFalse();
		this.async.release(lease).toCompletableFuture().get(10, TimeUnit.SECONDS);
		Lease lost = this.async.acquire(key, LockOptions.defaults()).get(10, TimeUnit.SECONDS);
		assertThat(this.store.expire(key)).isTrue();
		assertThat(failureOf(this.async.release(lost).toCompletableFuture())).isInstanceOf(LeaseLostException.class)
			.hasMessageContaining(key);
		assertThat(this.template.heldLocks()).isZero();
	}

	/** A wait that runs out fails naming the key, and the action never runs. */
	@Test
	void aWaitThatRunsOutFailsNamingTheKey() throws Exception {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		CompletableFuture<String> run = this.async.execute(key,
				LockOptions.builder().waitTime(Duration.ofMillis(200)).build(), () -> {
					started.set(true);
					return CompletableFuture.completedFuture("done");
				});
		assertThat(failureOf(run))
			.isInstanceOfSatisfying(LockAcquisitionException.class, (ex) -> assertThat(ex.getKey()).isEqualTo(key))
			.hasMessageContaining(key);
		assertThat(failureOf(this.async.acquire(key, noWait()))).isInstanceOf(LockAcquisitionException.class);
		assertThat(this.async.tryAcquire(key, noWait()).get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(started).isFalse();
		held.release();
	}

	/**
	 * Several keys, all or none: taken together once free, and a wait that runs out fails
	 * naming the keys and leaves none held.
	 */
	@Test
	void acquireAllTakesEveryKeyOrNone() throws Exception {
		String a = key();
		String b = key();
		Lease heldB = this.other.acquire(b, LockOptions.defaults());
		CompletableFuture<MultiLease> waiting = this.async.acquireAll(List.of(b, a),
				LockOptions.builder().waitTime(Duration.ofSeconds(30)).build());
		assertThat(waiting).isNotDone();
		heldB.release();
		try (MultiLease both = waiting.get(10, TimeUnit.SECONDS)) {
			assertThat(both.keys()).containsExactlyInAnyOrder(a, b);
			assertThat(heldElsewhere(a)).isTrue();
			assertThat(heldElsewhere(b)).isTrue();
		}
		Lease heldA = this.other.acquire(a, LockOptions.defaults());
		CompletableFuture<MultiLease> runsOut = this.async.acquireAll(List.of(a, b),
				LockOptions.builder().waitTime(Duration.ofMillis(200)).build());
		assertThat(failureOf(runsOut)).isInstanceOf(LockAcquisitionException.class)
			.hasMessageContaining(a)
			.hasMessageContaining(b);
		assertThat(heldElsewhere(b)).isFalse();
		heldA.release();
		assertThat(this.template.heldLocks()).isZero();
	}

	/**
	 * A thousand callers waiting on one held key add only a few threads, then each runs
	 * its action alone.
	 */
	@Test
	void aThousandWaitersHoldNoThreadEach() throws Exception {
		String key = key();
		int waiters = 1000;
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofSeconds(50)).build();
		List<CompletableFuture<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < waiters; i++) {
			int index = i;
			runs.add(this.async.execute(key, patient, () -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				inside.decrementAndGet();
				return CompletableFuture.completedFuture(index);
			}));
		}
		Await.until("all wait", Duration.ofSeconds(30),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == waiters);
		int peakWhileWaiting = threads.getPeakThreadCount();
		held.release();
		CompletableFuture.allOf(runs.toArray(new CompletableFuture<?>[0])).get(50, TimeUnit.SECONDS);
		System.out.printf("%d async callers waiting on one key: %d threads before, peak %d while waiting%n", waiters,
				before, peakWhileWaiting);
		assertThat(peakWhileWaiting - before).as("threads added while %d callers waited", waiters)
			.isLessThanOrEqualTo(20);
		assertThat(overlaps).hasValue(0);
		assertThat(this.template.heldLocks()).isZero();
	}

	private static Throwable failureOf(CompletionStage<?> stage) throws Exception {
		try {
			stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
		catch (CancellationException ex) {
			return ex;
		}
		throw new AssertionError("completed normally");
	}

	/** How each hold of a key ended, as the template's observer hears it. */
	static final class ReleaseCounter implements LockObserver {

		private final java.util.Map<String, List<HoldOutcome>> outcomes = new java.util.concurrent.ConcurrentHashMap<>();

		@Override
		public Acquisition acquiring(String key, @Nullable String name, boolean fair) {
			return new Acquisition() {
				@Override
				public Holding acquired(Lease lease) {
					return (outcome, error) -> ReleaseCounter.this.outcomes
						.computeIfAbsent(key, (k) -> new java.util.concurrent.CopyOnWriteArrayList<>())
						.add(outcome);
				}
			};
		}

		List<HoldOutcome> of(String key) {
			return this.outcomes.getOrDefault(key, List.of());
		}

	}

}
