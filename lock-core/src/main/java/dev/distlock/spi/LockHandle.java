package dev.distlock.spi;

import java.time.Duration;

/**
 * One acquisition of a lock. Every operation checks ownership in the store: a handle
 * never renews or deletes a lock that another acquisition holds, even after its own lease
 * expired.
 */
public interface LockHandle {

	/** The key as the user gave it. */
	String key();

	/** The fencing token issued with this acquisition. */
	long fencingToken();

	/**
	 * Extends the lease to {@code leaseTime} from now if this acquisition still owns the
	 * lock.
	 * @return false if the lock expired or belongs to another owner
	 */
	boolean renew(Duration leaseTime);

	/**
	 * Deletes the lock if this acquisition still owns it. A second call returns false and
	 * deletes nothing.
	 * @return false if the lock had already expired or belongs to another owner
	 */
	boolean release();

}
