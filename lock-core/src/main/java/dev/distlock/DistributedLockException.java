package dev.distlock;

import org.jspecify.annotations.Nullable;

/**
 * Base of every exception distlock throws for a lock that could not be taken, kept or
 * reached.
 */
public class DistributedLockException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String key;

	public DistributedLockException(String key, String message, @Nullable Throwable cause) {
		super(message, cause);
		this.key = key;
	}

	/** The lock key as the user gave it (without the configured prefix). */
	public String getKey() {
		return this.key;
	}

}
