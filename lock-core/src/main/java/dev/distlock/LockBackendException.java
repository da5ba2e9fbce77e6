package dev.distlock;

/**
 * The lock store (Redis) failed or could not be reached. The cause is the store client's
 * exception.
 */
public class LockBackendException extends DistributedLockException {

	private static final long serialVersionUID = 1L;

	public LockBackendException(String key, String message, Throwable cause) {
		super(key, message, cause);
	}

}
