package dev.distlock;

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

}
