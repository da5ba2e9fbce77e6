package dev.distlock.spi;

import java.time.Duration;

/**
 * A store with read-write locks: readers share a key, and the plain lock
 * ({@link LockProvider#tryLock}) is the writer's side of the same key, so a plain lock
 * fails while readers hold the key and a read fails while the plain lock is held.
 *
 * <p>
 * Writers are preferred: a writer that waits for a key records its intent
 * ({@link #tryLockExclusive}, or, on a store that also offers {@link LocalHandover}, its
 * block-reserving first attempt
 * {@link LocalHandover#tryLockBlock(String, Duration, int, String, Duration)}), and while
 * an intent is recorded no new reader comes in, so readers cannot starve a waiting
 * writer. An intent lapses by itself when its writer stops asking (it died), so a dead
 * writer blocks readers for at most its {@code intentTimeout}.
 *
 * <p>
 * Every read hold is an acquisition of its own: its handle renews and releases that hold
 * only, owner-checked as a plain lock's handle is, and a read hold that is not renewed
 * expires on the store's clock. A store that signals releases ({@link ReleaseSignalling})
 * signals on the key when its last reader leaves, when a writer releases, and when a
 * writer's intent ends without the writer taking the key, so that waiting readers and
 * writers need not poll.
 */
public interface SharedLocking extends LockProvider {

	/**
	 * Tries once to take a read hold on {@code key}: granted while no writer holds the
	 * key and no writer's intent is recorded.
	 * @param waiting the caller will wait for this key, so a release or a lapsed intent
	 * must be signalled
	 * @return {@link LockAttempt.Acquired} with this hold's handle, or
	 * {@link LockAttempt.Busy} with the writer's remaining lease (or the intent's) as a
	 * hint
	 */
	LockAttempt tryLockShared(String key, Duration leaseTime, boolean waiting);

	/**
	 * Tries once to take the write side of {@code key}, exactly as
	 * {@link LockProvider#tryLock} does (the same lock, the same handle) for a caller
	 * that waits, and, when readers hold the key, records that writer {@code waiterId}
	 * waits for it, for {@code intentTimeout} after this attempt. (Behind another writer
	 * no intent is needed: that writer's release is signalled, and if readers take the
	 * key first, the next attempt records it.) Taking the key ends the writer's intent.
	 * Running the same attempt twice must not lose the lock it took.
	 */
	LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout);

	/**
	 * As {@link #tryLockExclusive(String, Duration, String, Duration)};
	 * {@code intentRecorded} says whether an earlier attempt of this waiter found the key
	 * busy (and so may have recorded an intent). When it is false the store need not end
	 * an intent on taking the key, so that an uncontended writer costs what a plain
	 * lock's acquire costs.
	 */
	default LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout,
			boolean intentRecorded) {
		return tryLockExclusive(key, leaseTime, waiterId, intentTimeout);
	}

	/**
	 * As {@link #tryLockExclusive(String, Duration, String, Duration, boolean)}, and, on
	 * a store that also offers {@link LocalHandover}, reserving a block of {@code tokens}
	 * fencing tokens with the lock it takes, exactly as
	 * {@link LocalHandover#tryLockBlock} does: the handle is then a {@link TokenBlock},
	 * so the lock a waiting writer takes can be handed over in its JVM too. The default
	 * reserves a single token: such a lock always goes back to the store at its release.
	 * @param tokens the size of the block, at least 1
	 */
	default LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout,
			boolean intentRecorded, int tokens) {
		return tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded);
	}

	/**
	 * A waiting writer gives up: its intent ends at once, and readers held back by it
	 * only are signalled.
	 */
	void withdrawIntent(String key, String waiterId);

}
