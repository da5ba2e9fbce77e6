package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * Plain locks and token blocks in memory: a key is taken when nobody holds it, neither
 * side, with a block of tokens from the store's one counter. A write lock's attempt is
 * the same, recording the writer's intent when readers hold the key.
 */
final class InMemoryMutexes {

	private final KeySpace<LockEntry> locks;

	private final AtomicLong fence;

	private final Runnable sweep;

	InMemoryMutexes(KeySpace<LockEntry> locks, AtomicLong fence, Runnable sweep) {
		this.locks = locks;
		this.fence = fence;
		this.sweep = sweep;
	}

	/**
	 * A busy attempt with {@code waiting} marks the key, and the holder's release reports
	 * the mark ({@link TokenBlock#releasedToWaiters()}). Every release is signalled to
	 * every subscriber of its key, whether marked or not.
	 */
	LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens) {
		return tryLockBlock(key, leaseTime, waiting, tokens, null, 0);
	}

	/**
	 * A waiting writer's first attempt: busy behind readers, the intent is recorded as
	 * {@link InMemoryReadWriteLocks#tryLockExclusive} records it.
	 */
	LockAttempt tryLockBlock(String key, Duration leaseTime, int tokens, String waiterId, Duration intentTimeout) {
		return tryLockBlock(key, leaseTime, true, tokens, waiterId, KeySpace.positive(intentTimeout));
	}

	private LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens,
			@Nullable String writerId, long keepIntent) {
		long lease = KeySpace.positive(leaseTime);
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		this.sweep.run();
		return this.locks.update(key, true, (entry, now) -> {
			if (entry.free()) {
				if (writerId != null) {
					entry.intents.remove(writerId);
				}
				return entry.acquire(this.locks, this.fence, key, lease, now, null, tokens);
			}
			entry.waited |= waiting;
			if (writerId != null && entry.holder == null) {
				// Readers hold it: hold new ones back.
				entry.intents.put(writerId, now + keepIntent);
			}
			return entry.busy(now);
		});
	}

}
