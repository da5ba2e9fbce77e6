package dev.distlock.spi;

import java.time.Duration;

/**
 * A lock store. Makes one attempt, never waits, and knows nothing of Spring Boot, threads
 * or reentrancy; the waiting loop, renewal and reentrancy are built on top of it in
 * {@code dev.distlock.support}.
 *
 * <p>
 * Implementations must be thread-safe, give every attempt a fresh owner identity (so that
 * no handle can delete or renew another acquisition's lock), and wrap store failures in
 * {@link dev.distlock.LockBackendException}.
 */
public interface LockProvider {

	/**
	 * Tries once to take the lock on {@code key} for {@code leaseTime}.
	 * @return {@link LockAttempt.Acquired} with a handle, or {@link LockAttempt.Busy}
	 * with the holder's remaining lease as a hint for when to retry
	 */
	LockAttempt tryLock(String key, Duration leaseTime);

}
