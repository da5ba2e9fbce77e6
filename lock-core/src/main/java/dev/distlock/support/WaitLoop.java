package dev.distlock.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentMap;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.support.handover.Handover;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * What the waits for one lock share, for the callers at the front of this JVM's lines:
 * attempts at the store, the pause after each, take-overs of locks left for the line,
 * fair queueing, and the "too slow to count" rule for late acquire replies. Each wait is
 * a {@link LockWait}.
 */
final class WaitLoop {

	private static final Log logger = LogFactory.getLog(WaitLoop.class);

	/** Turns an acquired handle into the caller's lease. */
	@FunctionalInterface
	interface Holder {

		/**
		 * @param acquirer the thread that gets the lease; null for a wait that held no
		 * thread
		 */
		ManagedLease hold(LockHandle handle, LockSettings settings, long sentAtNanos, @Nullable Thread acquirer);

	}

	/** Runs clean-up no caller waits for, logging its failure with the given message. */
	@FunctionalInterface
	interface Background {

		void run(Runnable task, String failureMessage);

	}

	private final LockProvider provider;

	private final ConcurrentMap<String, ManagedLease> held;

	private final Holder holder;

	private final Background background;

	private final Handover<ManagedLease> handover;

	private final PendingReleases pendingReleases;

	private final StoreCalls calls;

	WaitLoop(LockProvider provider, ConcurrentMap<String, ManagedLease> held, Holder holder, Background background,
			Handover<ManagedLease> handover, PendingReleases pendingReleases) {
		this.handover = handover;
		this.pendingReleases = pendingReleases;
		this.provider = provider;
		this.calls = new StoreCalls(provider);
		this.held = held;
		this.holder = holder;
		this.background = background;
	}

	/**
	 * One store call, as a future, on the caller's thread or the store's call executor
	 * ({@link StoreCalls}).
	 */
	CompletableFuture<LockAttempt> tryLock(LockRequest request, @Nullable Thread caller) {
		return this.calls.tryLock(request, caller);
	}

	/**
	 * A lock a waiter took after its caller stopped waiting for it: released, in the
	 * background.
	 */
	void giveBack(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			LockHandle handle = acquired.handle();
			this.background.run(handle::release, "Could not release lock '" + handle.key() + "' that its caller"
					+ " stopped waiting for; it expires after its lease");
		}
	}

	/** As {@link #giveBack(LockAttempt)} for a lease already made. */
	void giveBack(ManagedLease lease) {
		this.background.run(lease::release, "Could not release lock '" + lease.key() + "' that its caller"
				+ " stopped waiting for; it expires after its lease");
	}

	/** How waiters of {@code kind} learn of releases. */
	ReleaseSignals signals(LockKind kind) {
		if (!(this.provider instanceof ReleaseSignalling signalling)) {
			return ReleaseSignals.NONE;
		}
		return (kind == LockKind.PERMITS) ? signalling.permitSignals() : signalling.releaseSignals();
	}

	/** Whether a lease of this JVM holds {@code key} (or is being released). */
	boolean heldHere(String key) {
		return this.held.containsKey(key);
	}

	/**
	 * How long to wait without asking the store, or -1 to ask it. A key held by another
	 * thread of this JVM signals its release or loss here directly, so asking the store
	 * would only cost a round trip; never past the holder's deadline, since a lease that
	 * runs out unrenewed frees the key then, whether or not its holder notices. (A fair
	 * waiter must ask, to keep its place in the queue; a semaphore's permits are not kept
	 * in this JVM's map.) After the lock went back to the store for another JVM's waiter,
	 * this JVM's waiters let it go first ({@link Handover#releasedToOthers}).
	 */
	long localPause(LockRequest request, LockSettings settings, LocalQueue queue) {
		LockKind kind = request.kind();
		ManagedLease local = (kind == LockKind.FAIR || kind == LockKind.PERMITS) ? null : this.held.get(request.key());
		if (local != null && local.heldNow()) {
			return Math.max(0, Math.min(settings.retryInterval().toNanos(), local.nanosToDeadline()));
		}
		long standBack = this.handover.standBackNanos(kind, queue.handover());
		return (standBack > 0) ? standBack : -1;
	}

	/**
	 * The lease of an attempt that took the lock in time; null for a busy answer or one
	 * that came too late to count, whose lock is released in the background.
	 */
	@Nullable ManagedLease outcome(LockRequest request, LockAttempt attempt, LockSettings settings, LocalQueue queue, long sent,
			@Nullable Thread acquirer) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			if (System.nanoTime() - sent < LockHandle.validityNanos(settings.leaseTime())) {
				this.handover.markedHere(request.kind(), queue.handover(), false);
				return this.holder.hold(acquired.handle(), settings, sent, acquirer);
			}
			discardLate(acquired.handle());
		}
		// A lease of this JVM, held or being released: the mark a waiting attempt just
		// made on the key is this JVM's own.
		if (request.waiting() && this.held.containsKey(request.key())) {
			this.handover.markedHere(request.kind(), queue.handover(), true);
		}
		return null;
	}

	/**
	 * The pause after an attempt at the store that did not take the lock. With signals,
	 * the retry interval is only the fallback for a lost signal; until the subscription
	 * is up, and without signals, waiters poll with backoff. A waiter that leaves the
	 * polls to another ({@code polls} false) waits for a signal, or for the line to hand
	 * it the poll. Never past the busy answer's remaining lease.
	 */
	long storePause(LockAttempt attempt, ReleaseSignals signals, String key, LockSettings settings, Backoff backoff,
			boolean polls) {
		long pause = !polls ? Long.MAX_VALUE
				: signals.isListening(key) ? settings.retryInterval().toNanos() : backoff.nextPauseNanos();
		if (attempt instanceof LockAttempt.Busy busy && !busy.remaining().isZero()) {
			pause = Math.min(pause, busy.remaining().toNanos());
		}
		return pause;
	}

	/**
	 * Gives up a place in a fair queue, or a writer's intent, so that the next waiter (or
	 * the readers it held back) need not wait it out. Sent in the background: the caller
	 * has its answer, and a store that does not answer must not add another call's bound
	 * to its wait.
	 */
	void withdraw(LockRequest request) {
		String failure = (request.kind() == LockKind.FAIR)
				? "Could not leave the queue of lock '" + request.key() + "'; the place expires by itself"
				: "Could not withdraw the writer's intent on lock '" + request.key() + "'; it lapses by itself";
		this.background.run(() -> this.provider.withdraw(request), failure);
	}

	/**
	 * The lock a holder of this JVM left for the line, taken over by this caller, if
	 * there is one it may take; one it may not (other settings, its lease ran out
	 * meanwhile) is released in the store (owner-checked) and never counts as acquired.
	 * @param deadline when the caller's wait time runs out: an owner check the take-over
	 * needs after that gets only what is left of one store timeout after it
	 * @throws LockBackendException if the store failed the owner check the take-over
	 * waited for, or did not answer it in time
	 */
	@Nullable ManagedLease taken(LocalQueue queue, LockSettings settings, long askedNanos, long deadline,
			@Nullable Thread acquirer) {
		ManagedLease left = queue.handover().takeOffer();
		if (left == null) {
			return null;
		}
		ManagedLease next;
		// The owner check a take-over may wait for is a store call on behalf of the line:
		// callers behind this one wait for its end, and share its failure.
		LockBackendException failure = null;
		queue.callStarted();
		try {
			next = this.handover.takeOver(left, settings, askedNanos, deadline, (taken) -> {
				ManagedLease successor = taken.successor(settings, acquirer, System.nanoTime());
				return this.held.replace(taken.key(), taken, successor) ? successor : null;
			});
		}
		catch (LockBackendException ex) {
			failure = ex;
			discard(left, queue);
			throw ex;
		}
		catch (RuntimeException ex) {
			discard(left, queue);
			throw ex;
		}
		finally {
			queue.callEnded(failure);
		}
		if (next == null) {
			discard(left, queue);
		}
		return next;
	}

	/**
	 * Ends, in the background, a lock left for the line that nobody takes over: deleted
	 * in the store if still its own, then the line is told. A delete that fails as the
	 * store cannot be reached is tried again ({@link PendingReleases}).
	 */
	void discard(ManagedLease left, @Nullable LocalQueue queue) {
		this.held.remove(left.key(), left);
		this.background.run(() -> {
			try {
				left.releaseInStore();
			}
			catch (LockBackendException ex) {
				this.pendingReleases.add(left, ex);
				throw ex;
			}
			finally {
				if (queue != null) {
					queue.signal();
				}
			}
		}, "Could not release lock '" + left.key() + "' that no thread of this JVM took over;"
				+ " it expires after its lease");
	}

	/**
	 * Deletes, if still ours, a lock whose acquire reply came too late; in the
	 * background.
	 */
	private void discardLate(LockHandle handle) {
		logger.warn("Acquire reply for lock '" + handle.key() + "' arrived after its lease could have expired;"
				+ " not counting it as acquired");
		this.background.run(handle::release, "Could not clean up late lock '" + handle.key() + "'");
	}

	static LockAcquisitionException interrupted(String key, LockSettings settings, @Nullable Exception cause) {
		return new LockAcquisitionException(key, settings.waitTime(),
				"Interrupted while waiting for lock '" + key + "'", cause);
	}

}
