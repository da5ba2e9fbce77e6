package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockAttempt;

/**
 * Read-write locks in memory: readers share a key, a plain lock is the writer's side
 * ({@link InMemoryMutexes}), and a waiting writer's intent holds new readers back until
 * it lapses or is withdrawn.
 */
final class InMemoryReadWriteLocks {

	private final KeySpace<LockEntry> locks;

	private final AtomicLong fence;

	private final Runnable sweep;

	InMemoryReadWriteLocks(KeySpace<LockEntry> locks, AtomicLong fence, Runnable sweep) {
		this.locks = locks;
		this.fence = fence;
		this.sweep = sweep;
	}

	/**
	 * Granted while no writer holds the key and no writer's intent is recorded.
	 */
	LockAttempt tryLockShared(String key, Duration leaseTime) {
		long lease = KeySpace.positive(leaseTime);
		this.sweep.run();
		return this.locks.update(key, true, (entry, now) -> {
			if (entry.holder != null || !entry.intents.isEmpty()) {
				return entry.busy(now);
			}
			ReadHold hold = new ReadHold(this.locks, key, this.fence.incrementAndGet());
			entry.readers.put(hold, now + lease);
			return new LockAttempt.Acquired(hold);
		});
	}

	/**
	 * A waiting writer's attempt: the same waiter asking again while it holds the lock
	 * gets that acquisition back; behind readers, its intent is recorded.
	 */
	LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout, int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		long lease = KeySpace.positive(leaseTime);
		long keepIntent = KeySpace.positive(intentTimeout);
		this.sweep.run();
		return this.locks.update(key, true, (entry, now) -> {
			Holder holder = entry.holder;
			if (holder != null && waiterId.equals(holder.waiterId())) {
				return new LockAttempt.Acquired(holder);
			}
			if (entry.free()) {
				entry.intents.remove(waiterId);
				return entry.acquire(this.locks, this.fence, key, lease, now, waiterId, tokens);
			}
			if (holder == null) {
				// Readers hold it: hold new ones back. (Another writer's release is
				// signalled anyway.)
				entry.intents.put(waiterId, now + keepIntent);
			}
			return entry.busy(now);
		});
	}

	void withdrawIntent(String key, String waiterId) {
		this.locks.update(key, false, (entry, now) -> {
			if (entry.intents.remove(waiterId) != null && entry.intents.isEmpty() && entry.holder == null) {
				entry.freed = true;
			}
			return null;
		});
	}

	/** Read holds on {@code key} now (expired ones not counted). */
	int readers(String key) {
		Integer readers = this.locks.update(key, false, (entry, now) -> entry.readers.size());
		return (readers != null) ? readers : 0;
	}

}
