package dev.distlock.spi;

/**
 * The handle of an acquisition that reserved a block of fencing tokens
 * ({@link LocalHandover#tryLockBlock}): its own token ({@link #fencingToken()}) is the
 * first of the block, and no acquisition the store grants later gets a token at or below
 * {@link #lastToken()}.
 */
public interface TokenBlock extends LockHandle {

	/**
	 * The last token of the block: every token the store hands out after this acquisition
	 * is greater.
	 */
	long lastToken();

	/**
	 * After a successful {@link #release()}: whether a waiter that does not share this
	 * handle's JVM (one that called the store's acquire with {@code waiting} while the
	 * lock was held) had marked the key, so that the release signalled it. The machinery
	 * then lets that waiter take the lock before this JVM's own waiters try again. A
	 * store that cannot tell answers true.
	 */
	default boolean releasedToWaiters() {
		return true;
	}

}
