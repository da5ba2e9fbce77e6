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
	 * token of the block and {@link TokenBlock#lastToken()} its last. A store may reserve
	 * fewer tokens than asked, down to the acquisition's own (Redis does when its counter
	 * is ahead of its clock): {@link TokenBlock#lastToken()} tells, and the machinery
	 * hands over only as many times as the block allows.
	 * @param waiting whether the caller will wait, so that the release must be signalled
	 * @param tokens the size of the block asked for, at least 1
	 */
	LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens);

	/**
	 * The first attempt of writer {@code waiterId} waiting for {@code key}: as
	 * {@link #tryLockBlock(String, Duration, boolean, int) tryLockBlock(key, leaseTime,
	 * true, tokens)}, and, on a store that also has read locks ({@link SharedLocking}),
	 * when readers hold the key this busy attempt records the writer's intent exactly as
	 * {@link SharedLocking#tryLockExclusive} does (for {@code intentTimeout}, ended by
	 * taking the key with a later {@code tryLockExclusive} or by
	 * {@link SharedLocking#withdrawIntent}), in the same store call, so that no new
	 * reader comes in from the writer's first attempt on. Such a store must override this
	 * method: the default, for stores without read locks, records nothing.
	 * @param tokens the size of the block, at least 1
	 * @param waiterId the waiting writer, as its later
	 * {@link SharedLocking#tryLockExclusive} attempts name it
	 * @param intentTimeout how long the intent lasts unless the writer asks again
	 */
	default LockAttempt tryLockBlock(String key, Duration leaseTime, int tokens, String waiterId,
			Duration intentTimeout) {
		return tryLockBlock(key, leaseTime, true, tokens);
	}

}
