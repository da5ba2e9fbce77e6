package dev.distlock.spi;

import java.time.Duration;

/**
 * A lock store, at its smallest: one attempt at a lock, which returns a
 * {@link LockHandle} that renews and releases it. It never waits, and knows nothing of
 * Spring, threads or reentrancy; waiting, renewal scheduling, re-entry and loss detection
 * are built on top of it in {@code dev.distlock.support}.
 *
 * <p>
 * What a store can do beyond that, it says by implementing a capability interface:
 * {@link ReleaseSignalling} (waiters are woken by releases instead of polling),
 * {@link FairLocking} (waiters queue in the store), {@link BatchRenewal} (many leases
 * renewed per round trip). An option that needs a capability the configured store lacks
 * fails at startup, naming the store and what is missing.
 *
 * <p>
 * Implementations must be thread-safe, give every attempt a fresh owner identity (so that
 * no handle can delete or renew another acquisition's lock), wrap store failures in
 * {@link dev.distlock.LockBackendException}, and return from every call within
 * {@link #callTimeout()}.
 */
public interface LockProvider {

	/**
	 * Tries once to take the lock on {@code key} for {@code leaseTime}.
	 * @return {@link LockAttempt.Acquired} with a handle, or {@link LockAttempt.Busy}
	 * with the holder's remaining lease as a hint for when to retry
	 */
	LockAttempt tryLock(String key, Duration leaseTime);

	/**
	 * The longest any one call of this provider (or of its handles) may take: every
	 * attempt, renewal and release returns, or throws
	 * {@link dev.distlock.LockBackendException}, within it, whatever the timeouts of the
	 * client library underneath. The waiting machinery relies on it: a caller waits at
	 * most its wait time plus this bound.
	 */
	default Duration callTimeout() {
		return Duration.ofSeconds(30);
	}

	/**
	 * The store's name as users configure it ({@code redis}, {@code in-memory}), for
	 * messages.
	 */
	default String storeName() {
		return getClass().getSimpleName();
	}

}
