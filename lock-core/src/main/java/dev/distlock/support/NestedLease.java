package dev.distlock.support;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.spi.ScopedLease;

/**
 * A re-entrant acquisition by the thread that already holds the lock: shares the outer
 * lease's key, token and state; releasing it does not free the lock (the outermost
 * release does) but reports a loss.
 */
final class NestedLease implements ScopedLease {

	private final ManagedLease outer;

	private final AtomicBoolean released = new AtomicBoolean();

	NestedLease(ManagedLease outer) {
		this.outer = outer;
	}

	ManagedLease outer() {
		return this.outer;
	}

	@Override
	public String key() {
		return this.outer.key();
	}

	@Override
	public long fencingToken() {
		return this.outer.fencingToken();
	}

	@Override
	public boolean isHeld() {
		return !this.released.get() && this.outer.isHeld();
	}

	@Override
	public void release() {
		if (this.released.compareAndSet(false, true)) {
			this.outer.exitNested();
		}
	}

	@Override
	public void scopeOpened() {
		this.outer.scopeOpened();
	}

	@Override
	public void scopeClosed() {
		this.outer.scopeClosed();
	}

	@Override
	public String toString() {
		return "NestedLease[" + this.outer + "]";
	}

}
