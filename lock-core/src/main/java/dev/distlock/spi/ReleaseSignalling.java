package dev.distlock.spi;

import java.time.Duration;

/**
 * A store that tells waiters when a lock may have become free, so that they need not
 * poll.
 */
public interface ReleaseSignalling extends LockProvider {

	/** How waiters learn of releases. */
	ReleaseSignals releaseSignals();

	/**
	 * As {@link #tryLock(String, Duration)}; {@code waiting} tells the store that the
	 * caller will wait for this lock, so that its release must be signalled.
	 */
	LockAttempt tryLock(String key, Duration leaseTime, boolean waiting);

	@Override
	default LockAttempt tryLock(String key, Duration leaseTime) {
		return tryLock(key, leaseTime, false);
	}

}
