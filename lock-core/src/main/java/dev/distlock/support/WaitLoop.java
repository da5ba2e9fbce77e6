package dev.distlock.support;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.spi.FairLocking;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.PermitLocking;
import dev.distlock.spi.SharedLocking;
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

	private static final String WAITER_PREFIX = UUID.randomUUID() + ":";

	private static final AtomicLong WAITER_SEQUENCE = new AtomicLong();

	private static final Log logger = LogFactory.getLog(WaitLoop.class);

	private static final Duration MIN_QUEUE_TIMEOUT = Duration.ofSeconds(1);

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
	 * @param askedNanos when the caller asked for the lock: a lock left for the line is
	 * taken over only as {@link Cohort#takeOver} allows for that moment
	 * @return the lease, or null when the wait ran out
	 */
	@Nullable ManagedLease run(String key, LockSettings settings, LocalQueue queue, long deadline, long askedNanos) {
		boolean waiting = !settings.waitTime().isZero();
		ReleaseSignals signals = settings.semaphore()
				? ((this.provider instanceof PermitLocking permitLocking) ? permitLocking.permitSignals()
						: ReleaseSignals.NONE)
				: (this.provider instanceof ReleaseSignalling signalling) ? signalling.releaseSignals()
						: ReleaseSignals.NONE;
		boolean signalled = waiting && signals != ReleaseSignals.NONE;
		Backoff backoff = new Backoff(settings.retryInterval().toNanos());
		queue.waiter = Thread.currentThread();
		// Subscribed before the first attempt, so that no release after it goes unheard.
		ReleaseSignals.Subscription subscription = signalled ? signals.subscribe(key, queue::signal) : null;
		boolean fair = settings.fair();
		// A plain or write waiter on a store with read locks records its intent with
		// every busy attempt, so that new readers stop coming in (see SharedLocking):
		// readers that kept overlapping would never leave a release to signal.
		boolean writer = waiting && !fair && !settings.read() && !settings.semaphore()
				&& this.provider instanceof SharedLocking;
		String waiterId = (fair || writer) ? newWaiterId() : "";
		boolean queued = fair;
		boolean cohort = this.cohort.applies(settings);
		boolean firstAttempt = true;
		// Whether an intent of this writer may be recorded in the store.
		boolean intent = false;
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
				ManagedLease local = (fair || settings.semaphore()) ? null : this.held.get(key);
				if (local != null && local.heldNow()) {
					// Held by another thread of this JVM: its release or loss signals
					// here
					// directly, so asking the store would only cost a round trip. (A fair
					// waiter must ask, to keep its place in the queue.)
					long remainingWait = deadline - System.nanoTime();
					if (remainingWait <= 0) {
						return taken(queue, settings, askedNanos, deadline);
					}
					// Never past the holder's deadline: a lease that runs out unrenewed
					// frees the key then, whether or not its holder notices.
					long pause = Math.min(settings.retryInterval().toNanos(), remainingWait);
					pause(queue, Math.max(0, Math.min(pause, local.nanosToDeadline())), key, settings);
					continue;
				}
				long standBack = cohort ? queue.standBackUntil - System.nanoTime() : 0;
				if (standBack > 0) {
					// The lock went back to the store for another JVM's waiter: let it go
					// first.
					long remainingWait = deadline - System.nanoTime();
					if (remainingWait <= 0) {
						return taken(queue, settings, askedNanos, deadline);
					}
					pause(queue, Math.min(standBack, remainingWait), key, settings);
					continue;
				}
				long sent = System.nanoTime();
				// With local hand-over, the first attempt reserves a token block and,
				// for a writer that finds readers holding the key, records its intent
				// in the same call; later ones, after the key was found busy, go as a
				// writer that refreshes it, so readers cannot starve it.
				LockAttempt attempt = attemptOnce(key, settings, queue, fair, waiting, waiterId,
						writer && !(cohort && firstAttempt), intent);
				firstAttempt = false;
				if (attempt instanceof LockAttempt.Acquired acquired) {
					// Taking the key ended the intent in the store.
					intent = false;
					if (System.nanoTime() - sent < ManagedLease.validityNanos(settings.leaseTime())) {
						queued = false;
						queue.selfMarked = false;
						return this.holder.hold(acquired.handle(), settings, sent);
					}
					discardLate(acquired.handle());
				}
				else if (writer) {
					// The busy attempt recorded the intent (or refreshed it), the
					// block-reserving first one included.
					intent = true;
				}
				if (cohort && waiting) {
					// A lease of this JVM, held or being released: the mark just made is
					// this JVM's own.
					if (this.held.containsKey(key)) {
						queue.selfMarked = true;
					}
				}
				long remainingWait = deadline - System.nanoTime();
				if (remainingWait <= 0) {
					return taken(queue, settings, askedNanos, deadline);
				}
				// With signals, the retry interval is only the fallback for a lost
				// signal.
				// Until the subscription is up, and without signals, waiters poll with
				// backoff.
				long pause = Math.min((signalled && signals.isListening(key)) ? settings.retryInterval().toNanos()
						: backoff.nextPauseNanos(), remainingWait);
				if (attempt instanceof LockAttempt.Busy busy && !busy.remaining().isZero()) {
					pause = Math.min(pause, busy.remaining().toNanos());
				}
				pause(queue, pause, key, settings);
			}
		}
		finally {
			queue.waiter = null;
			if (subscription != null) {
				subscription.close();
			}
			if (queued) {
				leaveQueue(key, waiterId);
			}
			if (intent) {
				withdrawIntent(key, waiterId);
			}
		}
	}

	/**
	 * One store call; its failure is the answer for the callers in line behind this one
	 * too.
	 */
	private LockAttempt attemptOnce(String key, LockSettings settings, LocalQueue queue, boolean fair, boolean waiting,
			String waiterId, boolean writer, boolean intent) {
		LockBackendException failure = null;
		queue.callStarted();
		try {
			if (settings.semaphore()) {
				return ((PermitLocking) this.provider).tryAcquirePermit(key, settings.permits(), settings.leaseTime(),
						waiting);
			}
			if (settings.read()) {
				return ((SharedLocking) this.provider).tryLockShared(key, settings.leaseTime(), waiting);
			}
			if (writer) {
				// A writer's attempt takes a single token even with local hand-over, so a
				// lock taken after waiting goes back to the store at its first release
				// and the other JVM gets its turn. A block here (SharedLocking's tokens
				// overload can reserve one) took the smaller JVM's share of a hot key
				// from about 40% to 25-29%, and a block only after waiting on this JVM's
				// own holder to 29-39% (benchmark S4).
				return ((SharedLocking) this.provider).tryLockExclusive(key, settings.leaseTime(), waiterId,
						queueTimeout(settings), intent, 1);
			}
			if (fair) {
				return fairLocking(key).tryLockFair(key, settings.leaseTime(), waiterId, queueTimeout(settings));
			}
			if (this.cohort.applies(settings)) {
				// A waiter id here is a waiting writer's: fair locks are never
				// handed over.
				return this.cohort.attempt(key, settings, waiting, waiterId.isEmpty() ? null : waiterId,
						queueTimeout(settings));
			}
			return (this.provider instanceof ReleaseSignalling signalling)
					? signalling.tryLock(key, settings.leaseTime(), waiting)
					: this.provider.tryLock(key, settings.leaseTime());
		}
		catch (LockBackendException ex) {
			if (Thread.currentThread().isInterrupted()) {
				throw interrupted(key, settings, ex);
			}
			failure = ex;
			throw ex;
		}
		finally {
			queue.callEnded(failure);
		}
	}

	/**
	 * A fair waiter attempts at least once per retry interval, each attempt keeping its
	 * place for this long; a waiter that dies is out of the queue after it.
	 */
	private static Duration queueTimeout(LockSettings settings) {
		Duration threeRetries = settings.retryInterval().multipliedBy(3);
		return (threeRetries.compareTo(MIN_QUEUE_TIMEOUT) < 0) ? MIN_QUEUE_TIMEOUT : threeRetries;
	}

	/**
	 * Gives up a place in a fair queue, so the next waiter need not wait it out. Sent in
	 * the background: the caller has its answer, and a store that does not answer must
	 * not add another call's bound to its wait.
	 */
	/**
	 * A waiter's id, unique across JVMs: this JVM's random prefix and a counter. A
	 * {@code UUID.randomUUID()} per waiter took a lock on the JVM's shared
	 * {@code SecureRandom} at every plain acquire (16 threads blocked on it).
	 */
	private static String newWaiterId() {
		return WAITER_PREFIX + Long.toString(WAITER_SEQUENCE.incrementAndGet(), 36);
	}

	private void leaveQueue(String key, String waiterId) {
		this.background.run(() -> fairLocking(key).leaveQueue(key, waiterId),
				"Could not leave the queue of lock '" + key + "'; the place expires by itself");
	}

	/**
	 * A waiting writer gives up: its intent ends at once, so that readers it held back
	 * need not wait for it to lapse. In the background, as {@link #leaveQueue}.
	 */
	private void withdrawIntent(String key, String waiterId) {
		this.background.run(() -> ((SharedLocking) this.provider).withdrawIntent(key, waiterId),
				"Could not withdraw the writer's intent on lock '" + key + "'; it lapses by itself");
	}

	private FairLocking fairLocking(String key) {
		if (this.provider instanceof FairLocking fairLocking) {
			return fairLocking;
		}
		throw new IllegalStateException("Lock '" + key + "' asks for a fair lock, but the " + this.provider.storeName()
				+ " store has no fair locks (it does not implement " + FairLocking.class.getName() + ")");
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
