package dev.distlock;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Programmatic distributed locking: the same locks, options and guarantees as
 * {@link DistributedLock}.
 *
 * <p>
 * Locks are reentrant per thread and mutually exclusive per key across all threads and
 * JVMs that share the store. Options not set in {@link LockOptions} come from
 * {@code distributed-lock.*} configuration.
 */
public interface LockTemplate {

	/**
	 * Runs {@code action} holding the lock on {@code key} with the configured defaults,
	 * and returns its result.
	 * @throws LockAcquisitionException if the lock is not acquired within the wait time
	 * @throws LeaseLostException if the lease was lost while the action ran (after it
	 * returned)
	 */
	default <T> T execute(String key, Supplier<T> action) {
		return execute(key, LockOptions.defaults(), action);
	}

	/**
	 * As {@link #execute(String, Supplier)}, with options overriding the configured
	 * defaults.
	 */
	<T> T execute(String key, LockOptions options, Supplier<T> action);

	/** As {@link #execute(String, Supplier)}, for an action with no result. */
	default void run(String key, Runnable action) {
		run(key, LockOptions.defaults(), action);
	}

	/**
	 * As {@link #execute(String, LockOptions, Supplier)}, for an action with no result.
	 */
	default void run(String key, LockOptions options, Runnable action) {
		execute(key, options, () -> {
			action.run();
			return null;
		});
	}

	/**
	 * Acquires the lock, waiting up to the wait time. The caller must release the
	 * returned lease, best with try-with-resources.
	 * @throws LockAcquisitionException if not acquired within the wait time, or if the
	 * thread was interrupted
	 * @throws LockBackendException if the store failed or could not be reached
	 */
	Lease acquire(String key, LockOptions options);

	/**
	 * Acquires the lock, waiting up to the wait time; empty if it was not acquired in
	 * time.
	 * @throws LockAcquisitionException if the waiting thread was interrupted
	 * @throws LockBackendException if the store failed or could not be reached
	 */
	Optional<Lease> tryAcquire(String key, LockOptions options);

	/**
	 * Acquires the locks on all of {@code keys} at once: deduplicated, taken in sorted
	 * order (so two callers with overlapping keys can neither deadlock nor livelock), all
	 * or none within one wait time. Never leaves some keys held after a failure, a
	 * timeout or an interrupt. Each key gets the fencing token a plain lock on it would
	 * get, and excludes plain locks on it. Keys this thread already holds in a scope are
	 * re-entered, as by {@link #acquire}.
	 * @throws LockAcquisitionException if not all acquired within the wait time, or if
	 * the thread was interrupted
	 * @throws LockBackendException if the store failed or could not be reached
	 * @throws UnsupportedOperationException if the store has no multi-key locks
	 */
	default MultiLease acquireAll(Collection<String> keys, LockOptions options) {
		throw new UnsupportedOperationException(getClass().getName() + " has no multi-key locks");
	}

	/**
	 * As {@link #acquireAll}; empty if not all keys were acquired within the wait time.
	 */
	default Optional<MultiLease> tryAcquireAll(Collection<String> keys, LockOptions options) {
		throw new UnsupportedOperationException(getClass().getName() + " has no multi-key locks");
	}

	/**
	 * Runs {@code action} holding the locks on all of {@code keys} ({@link #acquireAll}),
	 * with the same release and loss rules as
	 * {@link #execute(String, LockOptions, Supplier)}.
	 */
	default <T> T executeAll(Collection<String> keys, LockOptions options, Supplier<T> action) {
		throw new UnsupportedOperationException(getClass().getName() + " has no multi-key locks");
	}

	/** As {@link #executeAll}, for an action with no result. */
	default void runAll(Collection<String> keys, LockOptions options, Runnable action) {
		executeAll(keys, options, () -> {
			action.run();
			return null;
		});
	}

	/**
	 * The countdown latch {@code key}: joins its current generation, or arms a new one
	 * with {@code count} participants if there is none (never armed, or expired). An
	 * untouched latch is deleted {@code expiry} after its last change.
	 * @throws IllegalStateException if the current generation has a different count
	 * @throws UnsupportedOperationException if the store has no latches
	 */
	default DistributedLatch latch(String key, int count, Duration expiry) {
		throw new UnsupportedOperationException(getClass().getName() + " has no latches");
	}

	/**
	 * The resource {@code key} split into {@code segments} segments, each with its own
	 * lock, for hot inventory.
	 * @throws UnsupportedOperationException if the store has no multi-key locks (taking
	 * several segments needs them)
	 */
	default SegmentedLock segmented(String key, int segments) {
		throw new UnsupportedOperationException(getClass().getName() + " has no segmented locks");
	}

}
