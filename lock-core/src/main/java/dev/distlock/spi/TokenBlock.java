package dev.distlock.spi;

/**
 * The handle of an acquisition that reserved a block of fencing tokens
 * ({@link LockRequest#tokens()}, {@link LocalHandover}): its own token
 * ({@link #fencingToken()}) is the first of the block, and no acquisition the store
 * grants later gets a token at or below {@link #lastToken()}.
 */
public interface TokenBlock extends LockHandle {

	/**
	 * The last token of the block: every token the store hands out after this acquisition
	 * is greater.
	 */
	long lastToken();

	/**
	 * Asks the store whether it still holds this acquisition's lock for its owner,
	 * changing nothing (not its lease, not its mark). The machinery asks after a holder
	 * handed the lock on in memory, so that a lock the store lost behind the JVM's back
	 * (an eviction, a failover that lost writes, a manual delete) is reported to the
	 * holders it was passed through, and is not handed to a thread that asked after
	 * another JVM could have taken it. A store that cannot tell answers true: a local
	 * holder then learns of such a loss only from a renewal, or from the release that
	 * ends the run of hand-overs.
	 * @throws dev.distlock.LockBackendException if the store failed or did not answer
	 * within its call timeout
	 */
	default boolean stillHeld() {
		return true;
	}

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
