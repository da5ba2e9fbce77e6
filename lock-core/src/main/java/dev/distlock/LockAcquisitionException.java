package dev.distlock;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The lock was not acquired within the wait time (or the waiting thread was interrupted,
 * in which case the cause is the {@link InterruptedException} and the thread's interrupt
 * flag is set again).
 */
public class LockAcquisitionException extends DistributedLockException {

	private static final long serialVersionUID = 1L;

	private final Duration waitTime;

	public LockAcquisitionException(String key, Duration waitTime) {
		this(key, waitTime, "Lock '" + key + "' not acquired within " + format(waitTime), null);
	}

	public LockAcquisitionException(String key, Duration waitTime, String message, @Nullable Throwable cause) {
		super(key, message, cause);
		this.waitTime = waitTime;
	}

	/** The wait time that ran out. */
	public Duration getWaitTime() {
		return this.waitTime;
	}

	static String format(Duration duration) {
		return duration.toMillis() + "ms";
	}

}
