package dev.distlock.support;

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
 * Checks are shared: one store call on the wire at a time per run, and each answers every
 * release and take-over that began before it was sent, so a run of hand-overs costs its
 * releasing threads about one owner check per round trip, while the lock itself passes
 * without a store call.
 */
final class HandoverRun {

	private final TokenBlock block;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition answered = this.lock.newCondition();

	/**
	 * When the latest store call that found the lock held was sent (monotonic clock);
	 * written under {@link #lock}.
	 */
	private volatile long confirmedSent;

	/** A store call found the lock not held: it is lost for good. */
	private volatile boolean lost;

	/** Guarded by {@link #lock}: a store call of this run is on the wire. */
	private boolean calling;

	/** Guarded by {@link #lock}: the release that ends the run answered. */
	private boolean ended;

	/** Guarded by {@link #lock}: store calls of this run that failed. */
	private long failures;

	/** Guarded by {@link #lock}: the latest of them. */
	private @Nullable RuntimeException failure;

	/** The holder now, to be told when a check finds the lock lost. */
	private volatile @Nullable ManagedLease current;

	/**
	 * @param block the store acquisition
	 * @param sentNanos when its acquire was sent: it found the lock free and took it
	 */
	HandoverRun(TokenBlock block, long sentNanos) {
		this.block = block;
		this.confirmedSent = sentNanos;
	}

	/** Whether a store call found the lock no longer held. */
	boolean lost() {
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
	void holder(ManagedLease lease) {
		this.current = lease;
	}

	/**
	 * Whether the store held the lock when a call sent at or after {@code sinceNanos}
	 * ran: waits for such a call, joining one on the wire or making one. False once the
	 * lock is found lost; then the current holder is told.
	 * @throws dev.distlock.LockBackendException if the store failed
	 */
	boolean heldSince(long sinceNanos) {
		long sent;
		this.lock.lock();
		try {
			long failuresBefore = this.failures;
			while (true) {
				throwIfFailedSince(failuresBefore);
				if (this.lost) {
					return false;
				}
				if (this.confirmedSent - sinceNanos >= 0) {
					return true;
				}
				if (this.ended) {
					// The run ended in the store with the lock still held, and after
					// everything this run handed out.
					return true;
				}
				if (!this.calling) {
					break;
				}
				this.answered.awaitUninterruptibly();
			}
			this.calling = true;
			sent = System.nanoTime();
		}
		finally {
			this.lock.unlock();
		}
		return answer(sent, false, this::askUninterruptibly);
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
	 * to a minimum hold time): after any check on the wire, so that no check finds the
	 * lock gone because the run itself ended it; its answer answers every check that
	 * began before it.
	 * @return what {@code call} returned: whether the lock was still held
	 */
	boolean end(BooleanSupplier call) {
		this.lock.lock();
		try {
			long failuresBefore = this.failures;
			while (this.calling) {
				this.answered.awaitUninterruptibly();
			}
			throwIfFailedSince(failuresBefore);
			if (this.ended || this.lost) {
				// The same lease asked again after an interrupt: the first call ended it.
				return !this.lost;
			}
			this.calling = true;
		}
		finally {
			this.lock.unlock();
		}
		return answer(System.nanoTime(), true, call);
	}

	/**
	 * A caller that waited for a store call of the run to end shares its failure: its own
	 * call would go to the same failing store, and waiting out a second store timeout
	 * would take it past its bound. Called holding {@link #lock}.
	 */
	private void throwIfFailedSince(long failuresBefore) {
		RuntimeException latest = this.failure;
		if (this.failures != failuresBefore && latest != null) {
			throw new LockBackendException(this.block.key(), "A store call for lock '" + this.block.key()
					+ "' that this call waited for failed: " + latest.getMessage(), latest);
		}
	}

	private boolean answer(long sent, boolean ending, BooleanSupplier call) {
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
			ManagedLease told = null;
			this.lock.lock();
			try {
				this.calling = false;
				if (failed != null) {
					this.failures++;
					this.failure = failed;
				}
				if (Boolean.TRUE.equals(held)) {
					if (sent - this.confirmedSent > 0) {
						this.confirmedSent = sent;
					}
					this.ended |= ending;
				}
				else if (held != null && !this.lost) {
					this.lost = true;
					told = ending ? null : this.current;
				}
				this.answered.signalAll();
			}
			finally {
				this.lock.unlock();
			}
			if (told != null) {
				told.lostInStore(
						"an owner check after a local hand-over found the key expired or held by another" + " owner");
			}
		}
	}

}
