package dev.distlock.support;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.LockBackendException;
import org.jspecify.annotations.Nullable;

/**
 * The local line for one key: threads of this JVM that want the same key line up at the
 * gate, in arrival order, so that only one of them at a time talks to the store and waits
 * for a release signal. The gate is left as soon as the lock is taken (or given up),
 * never held with the lock, so a lock that expires in the store never blocks this JVM.
 *
 * <p>
 * A store call of the thread at the gate that fails is the answer for everyone in line
 * behind it: they get a {@link LockBackendException} too, rather than waiting out their
 * wait time for a store that is not answering and then being told the lock was busy.
 */
final class LocalQueue {

	final Semaphore gate = new Semaphore(1, true);

	/** Threads using this line; guarded by the template's map compute. */
	int users;

	volatile boolean signalled;

	/** The wait of the caller at the gate, told of signals. */
	volatile @Nullable LockWait waiter;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition callEnded = this.lock.newCondition();

	/** Guarded by {@link #lock}. */
	private boolean calling;

	/** Guarded by {@link #lock}. */
	private long failures;

	/** Guarded by {@link #lock}. */
	private @Nullable LockBackendException lastFailure;

	/**
	 * A lock released by its holder while threads were in this line, still held in the
	 * store, for the next of them to take over in memory ({@link Cohort}); set while the
	 * template's map lock for the key is held, so never after the line emptied.
	 */
	private final AtomicReference<@Nullable ManagedLease> offered = new AtomicReference<>();

	/**
	 * Until when (monotonic clock) this JVM's waiters stand back, after the lock went
	 * back to the store for a waiter of another JVM.
	 */
	volatile long standBackUntil = System.nanoTime();

	/**
	 * A waiter of this JVM found the key busy, marking it as waited for, while a thread
	 * of this JVM held it: the store's mark then says nothing of other JVMs' waiters.
	 */
	volatile boolean selfMarked;

	/** A release (or loss) may have freed the key: the waiter at the gate retries. */
	void signal() {
		this.signalled = true;
		LockWait wait = this.waiter;
		if (wait != null) {
			wait.signal();
		}
	}

	/**
	 * Leaves {@code lease} for the next thread of the line, if none is left there yet.
	 * Called inside the template's map lock for the key, with threads in the line.
	 */
	boolean offer(ManagedLease lease) {
		return this.offered.compareAndSet(null, lease);
	}

	/** The lock left for the line, if any; taken once, by one caller. */
	@Nullable ManagedLease takeOffer() {
		return this.offered.getAndSet(null);
	}

	/** Failures so far: a caller notes this when it joins the line. */
	long failures() {
		this.lock.lock();
		try {
			return this.failures;
		}
		finally {
			this.lock.unlock();
		}
	}

	void callStarted() {
		this.lock.lock();
		try {
			this.calling = true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The store call ended; {@code failure} is its error, if the store failed. */
	void callEnded(@Nullable LockBackendException failure) {
		this.lock.lock();
		try {
			this.calling = false;
			if (failure != null) {
				this.failures++;
				this.lastFailure = failure;
			}
			this.callEnded.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Waits for the gate until {@code deadlineNanos}. If the wait time runs out while the
	 * thread at the gate is inside a store call, waits for that call to end too (at most
	 * {@code callTimeoutNanos}), since its outcome is this caller's answer.
	 * @param joinedFailures {@link #failures()} when the caller joined
	 * @return whether the gate was entered in time
	 * @throws LockBackendException if a store call of the line failed since the caller
	 * joined
	 */
	boolean enter(String key, long deadlineNanos, boolean tryOnce, long joinedFailures, long callTimeoutNanos)
			throws InterruptedException {
		boolean entered = tryOnce ? this.gate.tryAcquire()
				: this.gate.tryAcquire(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		if (!entered) {
			awaitCallEnd(callTimeoutNanos);
		}
		LockBackendException failure = failureSince(joinedFailures);
		if (failure != null) {
			if (entered) {
				this.gate.release();
			}
			throw new LockBackendException(key, "The store failed for a caller ahead of this one in the local line"
					+ " for lock '" + key + "': " + failure.getMessage(), failure);
		}
		return entered;
	}

	private void awaitCallEnd(long timeoutNanos) throws InterruptedException {
		this.lock.lock();
		try {
			long left = timeoutNanos;
			while (this.calling && left > 0) {
				left = this.callEnded.awaitNanos(left);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	private @Nullable LockBackendException failureSince(long joinedFailures) {
		this.lock.lock();
		try {
			return (this.failures != joinedFailures) ? this.lastFailure : null;
		}
		finally {
			this.lock.unlock();
		}
	}

}
