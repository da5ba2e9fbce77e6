package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.handover.HandoverRun;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link ManagedLease} ends: handed on to a waiting thread of this JVM, or released
 * in the store, and what its holder and the template are told of it. A holder that hands
 * the lock on learns at its own release whether the store still held it.
 */
final class LeaseEnd {

	private LeaseEnd() {
	}

	/**
	 * Releases once, and tells the observer how the hold ended. With a minimum hold time
	 * not yet over, the lock is not deleted: its lease in the store is shortened to what
	 * is left of that time (an owner-checked renewal), so it frees itself then, and no
	 * thread of this JVM waits for it.
	 */
	static void release(ManagedLease lease) {
		ManagedLease.State previous = lease.stopHolding();
		if (previous != ManagedLease.State.RELEASED) {
			told(lease, () -> end(lease, previous, System.nanoTime()));
		}
	}

	/**
	 * {@link #release} without blocking the calling thread: a lease that needs no more
	 * than the store's release (no renewal on the wire, no run of hand-overs, no minimum
	 * hold left, not revoked) is released through {@link LockHandle#releaseAsync}, and
	 * the answer completes on the thread the store answers on. Any other release runs on
	 * {@code workers}.
	 */
	static CompletableFuture<Void> releaseAsync(ManagedLease lease, Executor workers) {
		return releaseAsync(lease, workers, null);
	}

	/**
	 * {@link #releaseAsync(ManagedLease, Executor)}, where a release that needs no more
	 * than the store's is added to {@code together}, if given, to be sent with others by
	 * {@link #releaseTogether}, rather than sent now.
	 */
	static CompletableFuture<Void> releaseAsync(ManagedLease lease, Executor workers,
			@Nullable List<Together> together) {
		ManagedLease.State previous = lease.stopHoldingIfQuiet();
		if (previous == null) {
			return onWorker(workers, lease::release);
		}
		if (previous == ManagedLease.State.RELEASED) {
			return CompletableFuture.completedFuture(null);
		}
		long releasedNanos = System.nanoTime();
		boolean wasLost = (previous == ManagedLease.State.LOST);
		if (previous == ManagedLease.State.HELD && lease.events().handOver(lease)) {
			return onWorker(workers, () -> told(lease, () -> confirmHandedOver(lease, releasedNanos)));
		}
		if (lease.run() != null || lease.revoked() || minHoldLeftNanos(lease) >= 1_000_000) {
			return onWorker(workers, () -> told(lease, () -> endInStoreAndSignal(lease, wasLost, releasedNanos)));
		}
		Together release = new Together(lease, wasLost, releasedNanos, new CompletableFuture<>());
		if (together != null) {
			together.add(release);
			return release.answer;
		}
		lease.handle()
			.releaseAsync(workers)
			.whenComplete((deleted, failure) -> release.answered(deleted,
					(failure != null) ? Observations.unwrapped(failure) : null));
		return release.answer;
	}

	/**
	 * Sends the releases collected by {@link #releaseAsync(ManagedLease, Executor, List)}
	 * to {@code store} in one call, run on {@code workers}. A call that an interrupt cut
	 * short is asked again; a key the second call finds no longer held while its lease
	 * surely still ran was freed by the first.
	 */
	static void releaseTogether(List<Together> together, BatchRelease store, Executor workers) {
		if (together.isEmpty()) {
			return;
		}
		List<LockHandle> handles = together.stream().map((release) -> release.lease.handle()).toList();
		workers.execute(() -> {
			List<Boolean> deleted;
			try {
				deleted = Interrupts.setAsideAndRetry((attempt) -> {
					List<Boolean> answers = new ArrayList<>(store.releaseAll(handles));
					for (int i = 0; attempt > 1 && i < answers.size(); i++) {
						if (!answers.get(i) && System.nanoTime() - together.get(i).lease.deadlineNanos() < 0) {
							answers.set(i, true);
						}
					}
					return answers;
				});
			}
			catch (RuntimeException ex) {
				together.forEach((release) -> release.answered(null, ex));
				return;
			}
			for (int i = 0; i < together.size(); i++) {
				together.get(i).answered(deleted.get(i), null);
			}
		});
	}

	/**
	 * A release that needs no more than the store's, and its answer: completed once the
	 * holder and this JVM's waiters are told how the hold ended.
	 */
	static final class Together {

		private final ManagedLease lease;

		private final boolean wasLost;

		private final long releasedNanos;

		private final CompletableFuture<Void> answer;

		private Together(ManagedLease lease, boolean wasLost, long releasedNanos, CompletableFuture<Void> answer) {
			this.lease = lease;
			this.wasLost = wasLost;
			this.releasedNanos = releasedNanos;
			this.answer = answer;
		}

		private void answered(@Nullable Boolean deleted, @Nullable RuntimeException failure) {
			try {
				told(this.lease, () -> {
					try {
						signal(this.lease, this.wasLost, this.releasedNanos, deleted, failure);
					}
					finally {
						this.lease.events().ended(this.lease);
					}
				});
				this.answer.complete(null);
			}
			catch (RuntimeException ex) {
				this.answer.completeExceptionally(ex);
			}
		}

	}

	/**
	 * Runs {@code release} on a worker; the answer fails with what it throws, unwrapped.
	 */
	static CompletableFuture<Void> onWorker(Executor workers, Runnable release) {
		CompletableFuture<Void> released = new CompletableFuture<>();
		workers.execute(() -> {
			try {
				release.run();
				released.complete(null);
			}
			catch (RuntimeException ex) {
				released.completeExceptionally(ex);
			}
		});
		return released;
	}

	/**
	 * Runs {@code release} and tells the observer how the hold ended: released, lost, or
	 * not released for a store failure, which is thrown on.
	 */
	private static void told(ManagedLease lease, Runnable release) {
		LockObserver.HoldOutcome outcome;
		RuntimeException failure = null;
		try {
			release.run();
			outcome = LockObserver.HoldOutcome.RELEASED;
		}
		catch (LeaseLostException ex) {
			outcome = LockObserver.HoldOutcome.LEASE_LOST;
			failure = ex;
		}
		catch (RuntimeException ex) {
			outcome = LockObserver.HoldOutcome.RELEASE_FAILED;
			failure = ex;
		}
		LockObserver.HoldOutcome ended = outcome;
		RuntimeException error = failure;
		CompositeLockObserver.safely(() -> lease.holding().ended(ended, error));
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Hands the lease on to a waiting thread of this JVM, or ends it in the store.
	 * @param previous the state the holder released it in
	 * @param releasedNanos when its holder released it
	 */
	private static void end(ManagedLease lease, ManagedLease.State previous, long releasedNanos) {
		if (previous == ManagedLease.State.HELD && lease.events().handOver(lease)) {
			// Still registered: the thread that takes it over replaces it. This holder
			// is told whether the store still held the lock after it let go.
			confirmHandedOver(lease, releasedNanos);
			return;
		}
		endInStoreAndSignal(lease, previous == ManagedLease.State.LOST, releasedNanos);
	}

	/**
	 * After a hand-over: waits for an owner check sent after this holder let go (or the
	 * release that ended the run), so that a lock the store lost meanwhile is reported to
	 * this holder as a release to the store would report it. One store timeout at most,
	 * as a release to the store ({@link HandoverRun#heldSince(long)}).
	 */
	private static void confirmHandedOver(ManagedLease lease, long sinceNanos) {
		HandoverRun handedOn = lease.run();
		if (handedOn == null || handedOn.heldSince(sinceNanos)) {
			return;
		}
		lease.lostBecause("the key had expired or was held by another owner when an owner check after its local"
				+ " hand-over asked");
		throw lease.lostException();
	}

	/**
	 * Deletes the lock in the store (owner-checked) as the end of its run of hand-overs,
	 * if it had one: for a lock left for the line that nobody took over.
	 * @return whether it was still held
	 */
	static boolean releaseInStore(ManagedLease lease) {
		HandoverRun handedOn = lease.run();
		return (handedOn != null) ? handedOn.end(lease.handle()::release) : lease.handle().release();
	}

	/**
	 * Ends the lease in the store and tells its holder and this JVM's waiters how.
	 * @param wasLost whether the lease was known lost before the release
	 * @param releasedNanos when its holder released it: a release that fails after the
	 * deadline had passed then reports the loss, with the failure attached, whatever the
	 * store would have answered (a holder paused past its deadline releases before the
	 * deadline watch, paused with it, has marked the lease lost)
	 */
	private static void endInStoreAndSignal(ManagedLease lease, boolean wasLost, long releasedNanos) {
		try {
			if (lease.revoked()) {
				lease.events().freed(lease.key());
				throw lease.lostException();
			}
			boolean deleted;
			try {
				deleted = releaseUninterruptibly(lease);
			}
			catch (RuntimeException ex) {
				signal(lease, wasLost, releasedNanos, false, ex);
				throw ex;
			}
			signal(lease, wasLost, releasedNanos, deleted, null);
		}
		finally {
			// Still registered while the store call runs, so that a local waiter that
			// finds the key busy meanwhile knows that this JVM holds it.
			lease.events().ended(lease);
		}
	}

	/**
	 * What the store's answer to a release means for this JVM's waiters and the holder:
	 * {@code deleted} whether the lock was still ours, unless the release failed with
	 * {@code ex}.
	 * @throws LeaseLostException if the lock was lost, or the release failed after the
	 * deadline had passed (with the failure attached)
	 */
	private static void signal(ManagedLease lease, boolean wasLost, long releasedNanos, @Nullable Boolean deleted,
			@Nullable RuntimeException ex) {
		LeaseEvents events = lease.events();
		if (ex != null) {
			if (ex instanceof LockBackendException unreachable) {
				events.releaseFailed(lease, unreachable);
			}
			events.freed(lease.key());
			if (!wasLost && releasedNanos - lease.deadlineNanos() < 0) {
				throw ex;
			}
			lease.lostUnlessKnown("its lease deadline had passed when it was released, and the release failed");
			// The loss is what the caller must hear about; the failed clean-up is detail.
			LeaseLostException lost = lease.lostException();
			lost.addSuppressed(ex);
			throw lost;
		}
		boolean stillOurs = Boolean.TRUE.equals(deleted);
		if (stillOurs && lease.handle() instanceof TokenBlock block && block.releasedToWaiters()) {
			events.releasedToOthers(lease);
		}
		events.freed(lease.key());
		if (wasLost || !stillOurs) {
			lease.lostUnlessKnown("the key had expired or was held by another owner at release");
			throw lease.lostException();
		}
	}

	/**
	 * An interrupted holder still releases: otherwise its lock would block everyone for
	 * the rest of the lease. The call runs with the interrupt flag set aside (the caller
	 * gets it back), and a call that an interrupt cut short is asked again: the release
	 * is owner-checked, so asking twice deletes nothing of anyone else's. When the second
	 * answer is "not ours" and the deadline has not passed, the first call is what
	 * deleted the key, since an unexpired lease can only have been lost to a failover or
	 * a manual delete.
	 */
	static boolean releaseUninterruptibly(ManagedLease lease) {
		return Interrupts.setAsideAndRetry(
				(attempt) -> endInStore(lease) || (attempt > 1 && System.nanoTime() - lease.deadlineNanos() < 0));
	}

	/**
	 * Deletes the lock, or, while the minimum hold time is not over, shortens its lease
	 * to what is left of it (down to a millisecond). Shutdown always deletes.
	 * @return whether the lock was still ours
	 */
	static boolean endInStore(ManagedLease lease) {
		long left = minHoldLeftNanos(lease);
		HandoverRun handedOn = lease.run();
		if (left >= 1_000_000 && lease.released()) {
			Duration rest = Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(left) + 1);
			return (handedOn != null) ? handedOn.end(() -> lease.handle().renew(rest)) : lease.handle().renew(rest);
		}
		return releaseInStore(lease);
	}

	private static long minHoldLeftNanos(ManagedLease lease) {
		return lease.acquiredAtNanos() + lease.settings().minHoldTime().toNanos() - System.nanoTime();
	}

	/**
	 * Shutdown: the lease is declared lost (its holders are told, as for any loss) and
	 * the lock is deleted in the store, so that the next holder need not wait for the
	 * lease to run out. The holder's own {@link ManagedLease#release()} then throws
	 * {@link LeaseLostException}.
	 */
	static void revoke(ManagedLease lease, String reason) {
		lease.markLost(LockObserver.LossReason.SHUTDOWN, reason);
		if (!lease.lost()) {
			return;
		}
		lease.awaitRenewalOnTheWire();
		try {
			releaseUninterruptibly(lease);
		}
		finally {
			lease.markRevoked();
			lease.events().freed(lease.key());
		}
	}

}
