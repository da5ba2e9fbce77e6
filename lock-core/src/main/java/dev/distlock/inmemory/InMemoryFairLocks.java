package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockAttempt;

/**
 * Fair locks in memory: waiters queue on the lock's key in arrival order, each place kept
 * while its waiter asks again within the queue timeout, and the lock goes to the first of
 * them.
 */
final class InMemoryFairLocks {

	private final KeySpace<LockEntry> locks;

	private final AtomicLong fence;

	private final Runnable sweep;

	InMemoryFairLocks(KeySpace<LockEntry> locks, AtomicLong fence, Runnable sweep) {
		this.locks = locks;
		this.fence = fence;
		this.sweep = sweep;
	}

	/**
	 * The same waiter asking again while the lock is held by the acquisition it made gets
	 * that acquisition back, as a re-sent command would from Redis. A place in the queue
	 * that was not refreshed in time is dropped by the next call on the key.
	 */
	LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		long lease = KeySpace.positive(leaseTime);
		long keepPlace = KeySpace.positive(queueTimeout);
		this.sweep.run();
		return this.locks.update(key, true, (entry, now) -> {
			Holder holder = entry.holder;
			if (holder != null && waiterId.equals(holder.waiterId())) {
				return new LockAttempt.Acquired(holder);
			}
			String first = entry.queue.isEmpty() ? waiterId : entry.queue.keySet().iterator().next();
			if (entry.free() && first.equals(waiterId)) {
				entry.queue.remove(waiterId);
				return entry.acquire(this.locks, this.fence, key, lease, now, waiterId, 1);
			}
			// Re-putting a present key keeps its place: the queue is in arrival order.
			entry.queue.put(waiterId, now + keepPlace);
			if (!entry.free()) {
				return entry.busy(now);
			}
			// Free, but another waiter's turn: look again when its place would lapse.
			return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, entry.queue.get(first) - now)));
		});
	}

	void leaveQueue(String key, String waiterId) {
		this.locks.update(key, false, (entry, now) -> {
			// The next waiter may be the one whose turn it is now.
			if (entry.queue.remove(waiterId) != null && entry.holder == null && !entry.queue.isEmpty()) {
				entry.freed = true;
			}
			return null;
		});
	}

	/** Fair waiters queued for {@code key} whose place has not lapsed. */
	int queueLength(String key) {
		Integer length = this.locks.update(key, false, (entry, now) -> entry.queue.size());
		return (length != null) ? length : 0;
	}

}
