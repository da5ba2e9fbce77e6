package dev.distlock.support;

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
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The wait for one lock, for the caller at the front of this JVM's line for the key:
 * attempts at the store, pauses woken by release signals, fair queueing, and the "too
 * slow to count" rule for late acquire replies.
 */
final class WaitLoop {

	private static final Log logger = LogFactory.getLog(WaitLoop.class);

	/** Turns an acquired handle into the caller's lease. */
	@FunctionalInterface
	interface Holder {

		ManagedLease hold(LockHandle handle, LockSettings settings, long sentAtNanos);

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

	private final Cohort cohort;

	private final PendingReleases pendingReleases;

	WaitLoop(LockProvider provider, ConcurrentMap<String, ManagedLease> held, Holder holder, Background background,
			Cohort cohort, PendingReleases pendingReleases) {
		this.cohort = cohort;
		this.pendingReleases = pendingReleases;
		this.provider = provider;
		this.held = held;
		this.holder = holder;
		this.background = background;
	}

	/**
	 * Takes the lock for the caller at the front of this JVM's line, or gives up at the
	 * deadline: one store call, then a pause until a release signal, the holder's lease
	 * deadline, the busy answer's remaining lease or the retry interval, whichever comes
	 * first; again until acquired or out of time.
	 * @param first the request of the first attempt; each later one follows from the
	 * answer before it ({@link LockRequest#afterAttempt})
	 * @param askedNanos when the caller asked for the lock: a lock left for the line is
	 * taken over only as {@link Cohort#takeOver} allows for that moment
	 * @return the lease, or null when the wait ran out
	 */
	@Nullable ManagedLease run(LockRequest first, LockSettings settings, LocalQueue queue, long deadline, long askedNanos) {
		String key = first.key();
		ReleaseSignals signals = first.waiting() ? signals(first.kind()) : ReleaseSignals.NONE;
		Backoff backoff = new Backoff(settings.retryInterval().toNanos());
		queue.waiter = Thread.currentThread();
		// Subscribed before the first attempt, so that no release after it goes unheard.
		ReleaseSignals.Subscription subscription = (signals != ReleaseSignals.NONE)
				? signals.subscribe(key, queue::signal) : null;
		LockRequest request = first;
		boolean acquired = false;
		try {
			while (true) {
				if (Thread.currentThread().isInterrupted()) {
					throw interrupted(key, settings, null);
				}
				queue.signalled = false;
				ManagedLease handed = taken(queue, settings, askedNanos, deadline);
				if (handed != null) {
					return handed;
				}
				long pause = localPause(request, settings, queue);
				LockAttempt attempt = null;
				if (pause < 0) {
					long sent = System.nanoTime();
					attempt = attemptOnce(request, settings, queue);
					ManagedLease lease = outcome(request, attempt, settings, queue, sent);
					if (lease != null) {
						acquired = true;
						return lease;
					}
					request = request.afterAttempt(attempt instanceof LockAttempt.Busy);
				}
				long remainingWait = deadline - System.nanoTime();
				if (remainingWait <= 0) {
					return taken(queue, settings, askedNanos, deadline);
				}
				if (attempt != null) {
					pause = storePause(attempt, signals, key, settings, backoff);
				}
				pause(queue, Math.min(pause, remainingWait), key, settings);
			}
		}
		finally {
			queue.waiter = null;
			if (subscription != null) {
				subscription.close();
			}
			if (!acquired && request.keepsPlace()) {
				withdraw(request);
			}
		}
	}

	/** How waiters of {@code kind} learn of releases. */
	private ReleaseSignals signals(LockKind kind) {
		if (!(this.provider instanceof ReleaseSignalling signalling)) {
			return ReleaseSignals.NONE;
		}
		return (kind == LockKind.PERMITS) ? signalling.permitSignals() : signalling.releaseSignals();
	}

	/**
	 * How long to wait without asking the store, or -1 to ask it. A key held by another
	 * thread of this JVM signals its release or loss here directly, so asking the store
	 * would only cost a round trip; never past the holder's deadline, since a lease that
	 * runs out unrenewed frees the key then, whether or not its holder notices. (A fair
	 * waiter must ask, to keep its place in the queue; a semaphore's permits are not kept
	 * in this JVM's map.) After the lock went back to the store for another JVM's waiter,
	 * this JVM's waiters let it go first ({@link Cohort#releasedToOthers}).
	 */
	private long localPause(LockRequest request, LockSettings settings, LocalQueue queue) {
		LockKind kind = request.kind();
		ManagedLease local = (kind == LockKind.FAIR || kind == LockKind.PERMITS) ? null : this.held.get(request.key());
		if (local != null && local.heldNow()) {
			return Math.max(0, Math.min(settings.retryInterval().toNanos(), local.nanosToDeadline()));
		}
		long standBack = this.cohort.applies(kind) ? queue.standBackUntil - System.nanoTime() : 0;
		return (standBack > 0) ? standBack : -1;
	}

	/**
	 * The lease of an attempt that took the lock in time; null for a busy answer or one
	 * that came too late to count, whose lock is released in the background.
	 */
	private @Nullable ManagedLease outcome(LockRequest request, LockAttempt attempt, LockSettings settings,
			LocalQueue queue, long sent) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			if (System.nanoTime() - sent < ManagedLease.validityNanos(settings.leaseTime())) {
				queue.selfMarked = false;
				return this.holder.hold(acquired.handle(), settings, sent);
			}
			discardLate(acquired.handle());
		}
		// A lease of this JVM, held or being released: the mark a waiting attempt just
		// made on the key is this JVM's own.
		if (request.waiting() && this.cohort.applies(request.kind()) && this.held.containsKey(request.key())) {
			queue.selfMarked = true;
		}
		return null;
	}

	/**
	 * The pause after an attempt at the store that did not take the lock. With signals,
	 * the retry interval is only the fallback for a lost signal; until the subscription
	 * is up, and without signals, waiters poll with backoff. Never past the busy answer's
	 * remaining lease.
	 */
	private long storePause(LockAttempt attempt, ReleaseSignals signals, String key, LockSettings settings,
			Backoff backoff) {
		long pause = signals.isListening(key) ? settings.retryInterval().toNanos() : backoff.nextPauseNanos();
		if (attempt instanceof LockAttempt.Busy busy && !busy.remaining().isZero()) {
			pause = Math.min(pause, busy.remaining().toNanos());
		}
		return pause;
	}

	/**
	 * One store call; its failure is the answer for the callers in line behind this one
	 * too.
	 */
	private LockAttempt attemptOnce(LockRequest request, LockSettings settings, LocalQueue queue) {
		LockBackendException failure = null;
		queue.callStarted();
		try {
			return LockAttempt.join(this.provider.tryLock(request));
		}
		catch (LockBackendException ex) {
			if (Thread.currentThread().isInterrupted()) {
				throw interrupted(request.key(), settings, ex);
			}
			failure = ex;
			throw ex;
		}
		finally {
			queue.callEnded(failure);
		}
	}

	/**
	 * Gives up a place in a fair queue, or a writer's intent, so that the next waiter (or
	 * the readers it held back) need not wait it out. Sent in the background: the caller
	 * has its answer, and a store that does not answer must not add another call's bound
	 * to its wait.
	 */
	private void withdraw(LockRequest request) {
		String failure = (request.kind() == LockKind.FAIR)
				? "Could not leave the queue of lock '" + request.key() + "'; the place expires by itself"
				: "Could not withdraw the writer's intent on lock '" + request.key() + "'; it lapses by itself";
		this.background.run(() -> this.provider.withdraw(request), failure);
	}

	private static void pause(LocalQueue queue, long pauseNanos, String key, LockSettings settings) {
		if (!queue.park(pauseNanos)) {
			throw interrupted(key, settings, null);
		}
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
	private @Nullable ManagedLease taken(LocalQueue queue, LockSettings settings, long askedNanos, long deadline) {
		ManagedLease left = queue.takeOffer();
		if (left == null) {
			return null;
		}
		ManagedLease next;
		// The owner check a take-over may wait for is a store call on behalf of the line:
		// callers behind this one wait for its end, and share its failure.
		LockBackendException failure = null;
		queue.callStarted();
		try {
			next = this.cohort.takeOver(left, settings, this.held, askedNanos, deadline);
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
