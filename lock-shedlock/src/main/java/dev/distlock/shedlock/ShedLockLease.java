package dev.distlock.shedlock;

import java.time.Duration;

import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.spi.LockHandle;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition of a ShedLock lock, seen as a distlock {@link Lease} by the job that
 * runs under it ({@link LockContext#current()}). Its extensions share it; it ends when
 * the last of them is unlocked or cannot be extended.
 */
final class ShedLockLease implements Lease {

	private final String name;

	private final LockHandle handle;

	private final Thread opener = Thread.currentThread();

	private volatile long deadlineNanos;

	private volatile boolean ended;

	private LockContext.@Nullable Scope scope;

	ShedLockLease(String name, LockHandle handle) {
		this.name = name;
		this.handle = handle;
	}

	LockHandle handle() {
		return this.handle;
	}

	/**
	 * The lease counts as held until {@code lease} after {@code sentNanos}, less drift.
	 */
	void heldUntil(long sentNanos, Duration lease) {
		this.deadlineNanos = sentNanos + LockHandle.validityNanos(lease);
	}

	/** Makes this lease {@link LockContext#current()} on the locking thread. */
	void openScope() {
		this.scope = LockContext.open(this);
	}

	/**
	 * Ends the lease: it is no longer held, and the locking thread's scope is closed when
	 * this runs on that thread (as ShedLock's executor unlocks).
	 */
	void end() {
		this.ended = true;
		LockContext.Scope open = this.scope;
		if (open != null && Thread.currentThread() == this.opener) {
			this.scope = null;
			open.close();
		}
	}

	@Override
	public String key() {
		return this.name;
	}

	@Override
	public long fencingToken() {
		return this.handle.fencingToken();
	}

	@Override
	public boolean isHeld() {
		return !this.ended && System.nanoTime() - this.deadlineNanos < 0;
	}

	/**
	 * Refused: ShedLock unlocks when the job returns, keeping the lock for what is left
	 * of {@code lockAtLeastFor}.
	 */
	@Override
	public void release() {
		throw new UnsupportedOperationException("The ShedLock lock '" + this.name
				+ "' is released by ShedLock when the job returns; it cannot be released from inside the job");
	}

	@Override
	public String toString() {
		return "ShedLockLease[" + this.name + ", token=" + fencingToken() + "]";
	}

}
