package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.ReleaseSignals;

/**
 * Semaphores in memory: a key space of their own, each permit a lease with its own token
 * from the store's one counter, every freed permit signalled to every waiter of its
 * semaphore.
 */
final class InMemorySemaphores {

	private final KeySpace<SemaphoreSlot> semaphores = new KeySpace<>(SemaphoreSlot::new);

	private final AtomicLong fence;

	private final Runnable sweep;

	InMemorySemaphores(AtomicLong fence, Runnable sweep) {
		this.fence = fence;
		this.sweep = sweep;
	}

	KeySpace<SemaphoreSlot> space() {
		return this.semaphores;
	}

	ReleaseSignals signals() {
		return this.semaphores.signals();
	}

	/**
	 * The count is kept while any permit is held, and taken from the next attempt once
	 * none is.
	 */
	LockAttempt tryAcquirePermit(String key, int permits, Duration leaseTime) {
		if (permits <= 0) {
			throw new IllegalArgumentException("permits must be positive but was " + permits);
		}
		long lease = KeySpace.positive(leaseTime);
		this.sweep.run();
		return this.semaphores.update(key, true, (semaphore, now) -> {
			if (semaphore.holders.isEmpty()) {
				semaphore.permits = permits;
			}
			else if (semaphore.permits != permits) {
				throw new PermitCountMismatchException(key, semaphore.permits, permits);
			}
			if (semaphore.holders.size() >= permits) {
				long first = semaphore.holders.values()
					.stream()
					.mapToLong((deadline) -> deadline - now)
					.min()
					.orElse(1);
				return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, first)));
			}
			Permit permit = new Permit(this.semaphores, key, this.fence.incrementAndGet());
			semaphore.holders.put(permit, now + lease);
			return new LockAttempt.Acquired(permit);
		});
	}

	/**
	 * Ends every held permit of the semaphore {@code key} at once, as if their holders
	 * had died: for tests of what a holder does when its permit is lost. Waiters are
	 * signalled.
	 * @return how many permits were held
	 */
	int expirePermits(String key) {
		Integer ended = this.semaphores.update(key, false, (semaphore, now) -> {
			int held = semaphore.holders.size();
			semaphore.holders.clear();
			semaphore.freed = held > 0;
			return held;
		});
		return (ended != null) ? ended : 0;
	}

	/** Permits of the semaphore {@code key} held now (expired ones not counted). */
	int heldPermits(String key) {
		Integer held = this.semaphores.update(key, false, (semaphore, now) -> semaphore.holders.size());
		return (held != null) ? held : 0;
	}

}
