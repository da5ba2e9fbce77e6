package dev.distlock.inmemory;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockAttempt;
import org.jspecify.annotations.Nullable;

/**
 * A lock's key: its writer (the plain lock), readers, fair waiters and waiting writers'
 * intents. Only ever touched inside a {@code compute} on the key.
 */
final class LockEntry extends Slot {

	@Nullable Holder holder;

	/** When the holder's lease runs out, on the monotonic clock. */
	long deadline;

	/** Fair waiters by arrival, each with the time its place lapses. */
	final Map<String, Long> queue = new LinkedHashMap<>(2);

	/** Read holds, each with its deadline. */
	final Map<ReadHold, Long> readers = new HashMap<>(2);

	/** Waiting writers' intents, each with the time it lapses. */
	final Map<String, Long> intents = new LinkedHashMap<>(2);

	/** Whether a writer may take the key: nobody holds it, neither side. */
	boolean free() {
		return this.holder == null && this.readers.isEmpty();
	}

	/** A waiter asked for the lock while its holder held it. */
	boolean waited;

	LockAttempt acquire(KeySpace<LockEntry> locks, AtomicLong fence, String key, long leaseNanos, long now,
			@Nullable String waiterId, int tokens) {
		long last = fence.addAndGet(tokens);
		this.holder = new Holder(locks, key, last - tokens + 1, last, waiterId, new AtomicBoolean());
		this.waited = false;
		this.deadline = now + leaseNanos;
		return new LockAttempt.Acquired(this.holder);
	}

	/**
	 * Never zero, which means "unknown" and would make a waiter sleep a whole retry
	 * interval.
	 */
	LockAttempt busy(long now) {
		long until = this.deadline;
		if (this.holder == null) {
			// Readers, or intents: whichever ends first may change the answer.
			until = Long.MAX_VALUE;
			for (long deadline : this.readers.values()) {
				until = Math.min(until, deadline);
			}
			for (long lapse : this.intents.values()) {
				until = Math.min(until, lapse);
			}
		}
		return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, until - now)));
	}

	/**
	 * Expiry by lease, found out lazily; lapsed places leave the queue, lapsed intents
	 * let readers in.
	 */
	@Override
	void prune(long now) {
		if (this.holder != null && now - this.deadline >= 0) {
			this.holder = null;
			this.freed = true;
		}
		this.queue.values().removeIf((lapsesAt) -> now - lapsesAt >= 0);
		if (this.readers.values().removeIf((deadline) -> now - deadline >= 0)) {
			this.freed = true;
		}
		if (this.intents.values().removeIf((lapsesAt) -> now - lapsesAt >= 0)) {
			this.freed = true;
		}
	}

	@Override
	boolean unused() {
		return this.holder == null && this.queue.isEmpty() && this.subscribers.isEmpty() && this.readers.isEmpty()
				&& this.intents.isEmpty();
	}

}
