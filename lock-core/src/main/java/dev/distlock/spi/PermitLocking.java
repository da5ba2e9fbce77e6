package dev.distlock.spi;

import java.time.Duration;

/**
 * A store with semaphores: a key that admits a fixed number of holders at once, each
 * holding one permit. Semaphores live in a key space of their own: a semaphore and a lock
 * of the same key are unrelated.
 *
 * <p>
 * A permit is an acquisition like a lock's: its handle has its own owner and fencing
 * token, renews and releases that permit only (a handle never frees a permit it does not
 * hold, and a second release frees nothing), and a permit that is not renewed expires on
 * the store's clock, never a client's. So permits come back when their holder dies, and
 * only then. The permit count is stored with the semaphore: an attempt that declares
 * another count while permits are held fails with
 * {@link dev.distlock.PermitCountMismatchException}.
 */
public interface PermitLocking extends LockProvider {

	/**
	 * Tries once to take one permit of the semaphore {@code key} of {@code permits}
	 * permits.
	 * @param waiting the caller will wait, so that freed permits must be signalled
	 * @return {@link LockAttempt.Acquired} with this permit's handle, or
	 * {@link LockAttempt.Busy} with the time until the first held permit expires as a
	 * hint
	 * @throws dev.distlock.PermitCountMismatchException if the semaphore is held with
	 * another count
	 */
	LockAttempt tryAcquirePermit(String key, int permits, Duration leaseTime, boolean waiting);

	/**
	 * How waiters learn that permits of a semaphore may have been freed: every freed
	 * permit must wake a waiter, so that N freed permits wake N waiters (at least one per
	 * JVM that waits, whose local line then lets them in one after another). The keys
	 * subscribed to are semaphore keys. Without signals, waiters poll at their retry
	 * interval.
	 */
	default ReleaseSignals permitSignals() {
		return ReleaseSignals.NONE;
	}

}
