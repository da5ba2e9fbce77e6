package dev.distlock.inmemory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;

/**
 * Multi-key locks in memory: the sorted keys taken one by one, each atomically, and those
 * taken given back at once when one is busy, so a plain attempt may find a key busy for
 * that instant, as on a Redis cluster whose keys span slots.
 */
final class InMemoryMultiLocks {

	private final KeySpace<LockEntry> locks;

	private final AtomicLong fence;

	private final Runnable sweep;

	InMemoryMultiLocks(KeySpace<LockEntry> locks, AtomicLong fence, Runnable sweep) {
		this.locks = locks;
		this.fence = fence;
		this.sweep = sweep;
	}

	/**
	 * Each key is taken as a plain lock is, with a token from the same counter.
	 */
	LockAttempt tryLockAll(List<String> keys, Duration leaseTime) {
		long lease = KeySpace.positive(leaseTime);
		this.sweep.run();
		List<LockHandle> taken = new ArrayList<>(keys.size());
		for (String key : keys) {
			LockAttempt attempt = this.locks.update(key, true, (entry, now) -> entry.free()
					? entry.acquire(this.locks, this.fence, key, lease, now, null, 1) : entry.busy(now));
			if (attempt instanceof LockAttempt.Acquired acquired) {
				taken.add(acquired.handle());
			}
			else {
				taken.forEach(LockHandle::release);
				return new LockAttempt.Busy(((LockAttempt.Busy) attempt).remaining(), key);
			}
		}
		return new LockAttempt.AcquiredAll(taken);
	}

}
