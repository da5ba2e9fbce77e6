package dev.distlock.spi;

import java.time.Duration;

/**
 * A store that can reserve a block of fencing tokens with an acquisition, so that the JVM
 * holding a lock may pass it to its own waiting threads in memory, without a store call
 * ("lock cohorting": the store holds the global lock, the JVM is the cohort).
 *
 * <p>
 * {@link #tryLockBlock} takes the lock as {@link ReleaseSignalling#tryLock} does and, in
 * the same atomic step, moves the key's fencing counter past a block of {@code tokens}
 * tokens: the acquisition's own token is the first of the block, and every token a later
 * acquisition gets (from any JVM) is greater than the block's last. The machinery gives
 * the next token of the block to each thread that the lock is handed to locally, so every
 * holder's token is strictly greater than the previous holder's and smaller than any
 * token another JVM can get later.
 *
 * <p>
 * The store lease stays the acquisition's: renewals and the release of the local holders
 * all go through the handle of the acquisition, and the lease deadline carries over from
 * holder to holder. A store without this capability never hands a lock over locally:
 * every holder takes it from the store. Only plain exclusive locks are handed over, never
 * fair locks, read locks, semaphores or multi-key locks.
 *
 * <p>
 * A store whose handles report their loss ({@link LossReporting}) should not offer this
 * capability: a local holder learns of a loss from renewals and the deadline only.
 */
public interface LocalHandover extends LockProvider {

	/**
	 * One attempt, as {@link ReleaseSignalling#tryLock(String, Duration, boolean)} (or
	 * {@link #tryLock(String, Duration)} when the store does not signal), that also
	 * reserves {@code tokens} fencing tokens: an {@link LockAttempt.Acquired} result
	 * carries a {@link TokenBlock} whose {@link TokenBlock#fencingToken()} is the first
	 * token of the block and {@link TokenBlock#lastToken()} its last.
	 * @param waiting whether the caller will wait, so that the release must be signalled
	 * @param tokens the size of the block, at least 1
	 */
	LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens);

}
