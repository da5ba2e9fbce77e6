package dev.distlock.spi;

import dev.distlock.Lease;

/**
 * A lease that wants to know which threads run code in its scope: told by
 * {@link dev.distlock.LockContext#open(Lease)} on the thread that opens the scope and on
 * the same thread when it closes. Its implementation uses this to decide re-entry and
 * whom to tell of a loss.
 */
public interface ScopedLease extends Lease {

	/** The current thread has opened a scope of this lease. */
	void scopeOpened();

	/** The current thread has closed a scope it opened. */
	void scopeClosed();

}
