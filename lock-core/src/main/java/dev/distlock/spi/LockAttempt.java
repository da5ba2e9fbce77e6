package dev.distlock.spi;

import java.time.Duration;

/**
 * The outcome of one {@link LockProvider#tryLock} call.
 */
public sealed interface LockAttempt {

	/** The lock was taken; the handle is the only way to renew or release it. */
	record Acquired(LockHandle handle) implements LockAttempt {
	}

	/**
	 * Another owner holds the lock.
	 *
	 * @param remaining the holder's remaining lease as seen by the store, zero when
	 * unknown
	 */
	record Busy(Duration remaining) implements LockAttempt {
	}

}
