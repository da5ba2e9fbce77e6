package dev.distlock;

/**
 * A lease expired or was taken over while its holder still held it: another holder may
 * have run the same critical section concurrently. Thrown by {@link Lease#release()} and
 * by the {@link DistributedLock} advice.
 */
public class LeaseLostException extends DistributedLockException {

	private static final long serialVersionUID = 1L;

	public LeaseLostException(String key, String message) {
		super(key, message, null);
	}

}
