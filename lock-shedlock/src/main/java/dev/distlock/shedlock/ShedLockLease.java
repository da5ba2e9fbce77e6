package dev.distlock.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

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

	/**
	 * The leases whose scope this thread OPENED and has not closed: a lock taken but
	 * never unlocked on its thread stays in that thread's context only until it is no
	 * longer held and the thread locks again.
	 */
	private static final ThreadLocal<List<ShedLockLease>> OPENED = ThreadLocal.withInitial(ArrayList::new);

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

	/**
	 * Makes this lease {@link LockContext#current()} on the locking thread, after closing
	 * the scopes this thread left open for leases no longer held.
	 */
	void openScope() {
		List<ShedLockLease> leases = OPENED.get();
		for (ShedLockLease stale : List.copyOf(leases)) {
			if (!stale.isHeld()) {
				stale.closeScope();
			}
		}
		this.scope = LockContext.open(this);
		leases.add(this);
	}

	/**
	 * Ends the lease: it is no longer held, and the locking thread's scope is closed when
	 * this runs on that thread (as ShedLock's executor unlocks).
	 */
	void end() {
		this.ended = true;
		if (Thread.currentThread() == this.opener) {
			closeScope();
		}
	}

	/** Closes this lease's scope; on the opening thread only. */
	private void closeScope() {
		LockContext.Scope open = this.scope;
		if (open != null) {
			this.scope = null;
			open.close();
			List<ShedLockLease> leases = OPENED.get();
			leases.remove(this);
			if (leases.isEmpty()) {
				OPENED.remove();
			}
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
