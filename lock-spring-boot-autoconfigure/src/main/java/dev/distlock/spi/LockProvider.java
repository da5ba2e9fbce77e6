package dev.distlock.spi;

import java.time.Duration;
import java.util.List;

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

	/**
	 * As {@link #tryLock(String, Duration)}; {@code waiting} tells a provider with
	 * {@link #releaseSignals() release signals} that the caller will wait for this lock,
	 * so that its release must be signalled.
	 */
	default LockAttempt tryLock(String key, Duration leaseTime, boolean waiting) {
		return tryLock(key, leaseTime);
	}

	/**
	 * One attempt of a fair acquisition: the lock is taken only when it is free and
	 * {@code waiterId} is first in the key's queue; otherwise the waiter is queued (once)
	 * and its place kept for {@code queueTimeout} after this attempt, so that a waiter
	 * that dies leaves the queue by itself.
	 * @throws UnsupportedOperationException if this store has no fair locks
	 */
	default LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		throw new UnsupportedOperationException(getClass().getName() + " does not support fair locks");
	}

	/** A fair waiter gives up: leaves the queue at once, waking the next one. */
	default void leaveQueue(String key, String waiterId) {
	}

	/** How waiters learn of releases; {@link ReleaseSignals#NONE} makes them poll. */
	default ReleaseSignals releaseSignals() {
		return ReleaseSignals.NONE;
	}

	/**
	 * Renews several held locks, in as few round trips as the store allows, and reports
	 * the outcome of each handle to {@code results} before returning. A store failure is
	 * reported for the handles it concerns only: locks kept elsewhere (another cluster
	 * master, say) are renewed all the same. The default renews the handles one by one.
	 * @param handles handles of this provider
	 * @param leaseTimes the new lease of each handle, in the same order
	 * @param results told, for each index, whether that lock was renewed ({@code false}:
	 * expired or another owner's) or why the store could not say
	 */
	default void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		for (int i = 0; i < handles.size(); i++) {
			try {
				results.renewed(i, handles.get(i).renew(leaseTimes.get(i)));
			}
			catch (RuntimeException ex) {
				results.failed(i, ex);
			}
		}
	}

	/**
	 * The longest any one call of this provider may take: every attempt, renewal and
	 * release returns, or throws {@link dev.distlock.LockBackendException}, within it,
	 * whatever the timeouts of the client library underneath. The waiting machinery
	 * relies on it: a caller waits at most its wait time plus this bound.
	 */
	default Duration callTimeout() {
		return Duration.ofSeconds(30);
	}

	/** Where {@link #renewAll} reports the outcome of each handle. */
	interface RenewalResults {

		/** The store answered for handle {@code index}: renewed, or no longer ours. */
		void renewed(int index, boolean renewed);

		/** The store failed, or did not answer in time, for handle {@code index}. */
		void failed(int index, RuntimeException failure);

	}

}
