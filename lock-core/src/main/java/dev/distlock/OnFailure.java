package dev.distlock;

/**
 * What {@link DistributedLock} does when the lock is not acquired within its wait time.
 */
public enum OnFailure {

	/** Throw {@link LockAcquisitionException}; the method is not invoked. */
	THROW,

	/**
	 * Do not invoke the method and return {@code null} (or an empty
	 * {@link java.util.Optional}). Allowed on {@code void} and {@code Optional}-returning
	 * methods only; any other return type fails startup. Suits {@code @Scheduled} jobs
	 * that only one instance should run.
	 */
	SKIP

}
