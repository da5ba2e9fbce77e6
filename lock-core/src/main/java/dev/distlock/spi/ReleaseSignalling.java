package dev.distlock.spi;

/**
 * A store that tells waiters when a lock may have become free, so that they need not
 * poll. A request's {@link LockRequest#waiting()} tells such a store that the caller will
 * wait, so that the release must be signalled.
 */
public interface ReleaseSignalling extends LockProvider {

	/** How waiters learn of releases of locks, read holds and multi-key locks. */
	ReleaseSignals releaseSignals();

	/**
	 * How waiters learn that permits of a semaphore ({@link LockKind#PERMITS}) may have
	 * been freed: every freed permit must wake a waiter, so that N freed permits wake N
	 * waiters (at least one per JVM that waits, whose local line then lets them in one
	 * after another). The keys subscribed to are semaphore keys. Without signals, waiters
	 * poll at their retry interval.
	 */
	default ReleaseSignals permitSignals() {
		return ReleaseSignals.NONE;
	}

}
