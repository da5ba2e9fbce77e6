package dev.distlock.support.handover;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * One store acquisition while its lock passes among threads of this JVM ({@link Cohort}),
 * and the store calls that tell whether the store still holds it: the acquire itself,
 * owner checks ({@link TokenBlock#stillHeld()}) and the release that ends the run.
 *
 * <p>
 * A store can lose a held lock behind the JVM's back (an eviction, a failover that loses
 * writes, a manual delete), and a hand-over in memory cannot see that. Two rules keep the
 * guarantees of a lock taken from the store:
 * <ul>
 * <li><b>A holder is told.</b> A holder that handed the lock on learns, before its
 * release returns, whether the store still held the lock after it stopped holding: from
 * an owner check sent after that moment (or the release that ended the run). Since an
 * acquisition's owner is never the store's again once lost, a lock found held then was
 * held all along, and a lock found lost is reported as lost, as a release that goes to
 * the store would report it.</li>
 * <li><b>Tokens follow the order of the requests.</b> A thread may take the lock over
 * only if it asked for it before a store call that found the lock held was sent. Any
 * holder of another JVM that took the lock after a loss took it after that call ran, so
 * after this thread asked: its greater token belongs to a later request, and a block
 * token is never handed to a request that began after another JVM's holder got a greater
 * one. A thread that asked later makes (or joins) an owner check first.</li>
 * </ul>
 * Checks are shared: one owner check on the wire at a time per run, and each answers
 * every release and take-over that began before it was sent, so a run of hand-overs costs
 * its releasing threads about one owner check per round trip, while the lock itself
 * passes without a store call.
 *
 * <p>
 * Every caller waits one store timeout at most, as for a store call of its own: a release
 * from when it handed the lock on, a take-over from when it found the lock left for it
 * (or, once its wait time ran out, what is left of the store timeout after it). A caller
 * that waited for a call on the wire and still needs its own gets only what is left: its
 * check goes on another thread, and the caller stops waiting for it at its deadline with
 * a {@link LockBackendException}. The release that ends the run never waits for a check:
 * it goes at once, and a check that may have run after it (so may have found the lock
 * gone because the run itself ended it) is answered by that release instead.
 */
public final class HandoverRun {

	private final TokenBlock block;

	/**
	 * The store's bound on one call
	 * ({@link dev.distlock.spi.LockProvider#callTimeout()}).
	 */
	private final long callTimeoutNanos;

	/** Runs the owner check of a caller that cannot wait a whole store timeout for it. */
	private final Executor background;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition answered = this.lock.newCondition();

	/**
	 * When the latest store call that found the lock held was sent (monotonic clock);
	 * written under {@link #lock}.
	 */
	private volatile long confirmedSent;

	/** A store call found the lock not held: it is lost for good. */
	private volatile boolean lost;

	/** Guarded by {@link #lock}: an owner check of this run is on the wire. */
	private boolean checking;

	/** Guarded by {@link #lock}: the store call that ends the run is on the wire. */
	private boolean ending;

	/** Guarded by {@link #lock}: the release that ends the run found the lock held. */
	private boolean ended;

	/** Guarded by {@link #lock}: store calls of this run that failed. */
	private long failures;

	/** Guarded by {@link #lock}: the latest of them. */
	private @Nullable RuntimeException failure;

	/** The holder now, to be told when a check finds the lock lost. */
	private volatile @Nullable HandedLease<?> current;

	/**
	 * @param block the store acquisition
	 * @param sentNanos when its acquire was sent: it found the lock free and took it
	 * @param callTimeoutNanos the store's bound on one call
	 * @param background runs the owner check of a caller that cannot wait a whole store
	 * timeout for it
	 */
	HandoverRun(TokenBlock block, long sentNanos, long callTimeoutNanos, Executor background) {
		this.block = block;
		this.confirmedSent = sentNanos;
		this.callTimeoutNanos = callTimeoutNanos;
		this.background = background;
	}

	/** Whether a store call found the lock no longer held. */
	public boolean lost() {
		return this.lost;
	}

	/**
	 * Whether a thread that asked for the lock at {@code askedNanos} may take a token of
	 * the block without another owner check.
	 */
	boolean askedBeforeConfirmation(long askedNanos) {
		return askedNanos - this.confirmedSent <= 0;
	}

	/** The lease that holds the lock now, told if a check finds the lock lost. */
	void holder(HandedLease<?> lease) {
		this.current = lease;
	}

	/**
	 * Whether the store held the lock when a call sent at or after {@code sinceNanos}
	 * ran: waits for such a call, joining one on the wire or making one, for one store
	 * timeout from now at most. False once the lock is found lost; then the current
	 * holder is told.
	 * @throws LockBackendException if the store failed, or no such call answered in time
	 */
	public boolean heldSince(long sinceNanos) {
		return heldSince(sinceNanos, System.nanoTime() + this.callTimeoutNanos, true);
	}

	/**
	 * As {@link #heldSince(long)} for a caller with less than a store timeout left: it
	 * waits until {@code deadlineNanos} at most, and an owner check it needs goes on
	 * another thread.
	 */
	boolean heldSince(long sinceNanos, long deadlineNanos) {
		return heldSince(sinceNanos, deadlineNanos, false);
	}

	/**
	 * @param ownCallFits whether a call sent now on the caller's thread (bounded by the
	 * store timeout) ends by the deadline
	 */
	private boolean heldSince(long sinceNanos, long deadlineNanos, boolean ownCallFits) {
		boolean interrupted = false;
		this.lock.lock();
		try {
			long failuresBefore = this.failures;
			boolean waited = false;
			while (true) {
				throwIfFailedSince(failuresBefore);
				Boolean known = knownSince(sinceNanos);
				if (known != null) {
					return known;
				}
				long left = deadlineNanos - System.nanoTime();
				if (left <= 0) {
					throw unanswered();
				}
				if (!this.checking && !this.ending) {
					this.checking = true;
					long sent = System.nanoTime();
					if (ownCallFits && !waited) {
						checkHere(sent);
						failuresBefore = this.failures;
					}
					else {
						// Only what is left of the caller's time: the check goes on
						// another thread, and the caller waits until its deadline.
						checkInBackground(sent);
					}
					// Its answer is in the run now; a check that may have run after the
					// run's end waits for that end's answer.
					waited = true;
					continue;
				}
				waited = true;
				try {
					this.answered.awaitNanos(left);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			this.lock.unlock();
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * The caller's own check, on its thread, out of {@link #lock} (held on entry and on
	 * return); its failure is the caller's.
	 */
	private void checkHere(long sent) {
		this.lock.unlock();
		try {
			answer(sent, false, this::askUninterruptibly);
		}
		finally {
			this.lock.lock();
		}
	}

	/**
	 * What the calls so far tell a caller that needs a call sent at or after
	 * {@code sinceNanos}; null when it must wait for one. A release that ends the run
	 * answers every caller, since it was sent after every holder let go. Called holding
	 * {@link #lock}.
	 */
	private @Nullable Boolean knownSince(long sinceNanos) {
		if (this.lost) {
			return false;
		}
		if (this.confirmedSent - sinceNanos >= 0 || this.ended) {
			return true;
		}
		return null;
	}

	/** Called holding {@link #lock}, with {@link #checking} set for this check. */
	private void checkInBackground(long sent) {
		try {
			this.background.execute(() -> {
				try {
					answer(sent, false, this::askUninterruptibly);
				}
				catch (RuntimeException ex) {
					// Recorded by answer: the callers waiting for this check share it.
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.checking = false;
			this.failures++;
			this.failure = new LockBackendException(this.block.key(),
					"No owner check of lock '" + this.block.key() + "' could be sent: the template is closed", ex);
			this.answered.signalAll();
		}
	}

	private LockBackendException unanswered() {
		String key = this.block.key();
		return new LockBackendException(key, "No owner check of lock '" + key
				+ "' after its local hand-over answered within the store timeout of this call; the store is too slow",
				new TimeoutException("store timeout of the call ran out"));
	}

	/**
	 * The owner check, with the interrupt flag set aside; asked again if an interrupt cut
	 * it short (it changes nothing), and the flag given back.
	 */
	private boolean askUninterruptibly() {
		return Interrupts.setAsideAndRetry((attempt) -> this.block.stillHeld());
	}

	/**
	 * The store call that ends the run (a release, or the renewal that shortens the lease
	 * to a minimum hold time), sent at once, whatever check is on the wire: its answer
	 * answers every check that began before it, and a check that finds the lock gone
	 * while it is on the wire (or after it found the lock held) may have run after it, so
	 * tells nothing.
	 * @return what {@code call} returned: whether the lock was still held
	 */
	public boolean end(BooleanSupplier call) {
		this.lock.lock();
		try {
			long failuresBefore = this.failures;
			// Only the same lease asking again, or shutdown racing its holder, finds one.
			while (this.ending) {
				this.answered.awaitUninterruptibly();
			}
			throwIfFailedSince(failuresBefore);
			if (this.ended || this.lost) {
				// The same lease asked again after an interrupt: the first call ended it.
				return !this.lost;
			}
			this.ending = true;
		}
		finally {
			this.lock.unlock();
		}
		return answer(System.nanoTime(), true, call);
	}

	/**
	 * A caller that waited for a store call of the run to end shares its failure: its own
	 * call would go to the same failing store. Called holding {@link #lock}.
	 */
	private void throwIfFailedSince(long failuresBefore) {
		RuntimeException latest = this.failure;
		if (this.failures != failuresBefore && latest != null) {
			throw new LockBackendException(this.block.key(), "A store call for lock '" + this.block.key()
					+ "' that this call waited for failed: " + latest.getMessage(), latest);
		}
	}

	private boolean answer(long sent, boolean ends, BooleanSupplier call) {
		Boolean held = null;
		RuntimeException failed = null;
		try {
			held = call.getAsBoolean();
			return held;
		}
		catch (RuntimeException ex) {
			failed = ex;
			throw ex;
		}
		finally {
			HandedLease<?> told = recordAnswer(sent, ends, held, failed);
			if (told != null) {
				told.lostInStore(
						"an owner check after a local hand-over found the key expired or held by another owner");
			}
		}
	}

	/**
	 * A call its own thread's interrupt cut short says nothing of the store: a caller
	 * that waited for it sends its own instead of sharing that failure (the interrupted
	 * caller asks again itself, with the interrupt set aside).
	 */
	private static boolean cutShortByInterrupt(Throwable failed) {
		for (Throwable cause = failed; cause != null; cause = cause.getCause()) {
			if (cause instanceof InterruptedException) {
				return true;
			}
			if (cause.getCause() == cause) {
				return false;
			}
		}
		return false;
	}

	/**
	 * Records what a call sent at {@code sent} found ({@code held} is null when it failed
	 * with {@code failed}). A check that finds the lock gone while the release that ends
	 * the run is on the wire, or after it found the lock held, may have run after it:
	 * that release's answer counts instead.
	 * @return the holder to tell that the lock is lost, if any
	 */
	private @Nullable HandedLease<?> recordAnswer(long sent, boolean ends, @Nullable Boolean held,
			@Nullable RuntimeException failed) {
		this.lock.lock();
		try {
			if (ends) {
				this.ending = false;
			}
			else {
				this.checking = false;
			}
			if (failed != null && !cutShortByInterrupt(failed)) {
				this.failures++;
				this.failure = failed;
			}
			HandedLease<?> told = null;
			if (Boolean.TRUE.equals(held)) {
				if (sent - this.confirmedSent > 0) {
					this.confirmedSent = sent;
				}
				this.ended |= ends;
			}
			else if (held != null && !this.lost && (ends || !(this.ending || this.ended))) {
				this.lost = true;
				told = ends ? null : this.current;
			}
			this.answered.signalAll();
			return told;
		}
		finally {
			this.lock.unlock();
		}
	}

}
