package dev.distlock.spi;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A store that queues waiters, so that they take a lock in the order they asked for it,
 * across JVMs.
 */
public interface FairLocking extends LockProvider {

	/**
	 * One attempt of a fair acquisition: the lock is taken only when it is free and
	 * {@code waiterId} is first in the key's queue; otherwise the waiter is queued (once)
	 * and its place kept for {@code queueTimeout} after this attempt, so that a waiter
	 * that dies leaves the queue by itself. Running the same attempt twice (a client that
	 * re-sends a command whose reply was lost) must not lose the lock it took.
	 */
	LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout);

	/** A fair waiter gives up: leaves the queue at once, waking the next one. */
	void leaveQueue(String key, String waiterId);

	/**
	 * Why this store cannot take fair locks with its current settings, or null if it can;
	 * startup fails with this reason when fair locks are asked for.
	 */
	default @Nullable String fairLocksUnavailable() {
		return null;
	}

}
