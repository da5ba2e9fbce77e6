package dev.distlock.inmemory;

import java.time.Duration;

/** One permit of a semaphore. */
final class Permit extends SharedHold {

	private final KeySpace<SemaphoreSlot> semaphores;

	Permit(KeySpace<SemaphoreSlot> semaphores, String key, long fencingToken) {
		super(key, fencingToken);
		this.semaphores = semaphores;
	}

	@Override
	public boolean renew(Duration leaseTime) {
		long lease = KeySpace.positive(leaseTime);
		return Boolean.TRUE.equals(this.semaphores.update(this.key, false, (semaphore,
				now) -> semaphore.holders.computeIfPresent(this, (permit, deadline) -> now + lease) != null));
	}

	@Override
	public boolean release() {
		return Boolean.TRUE.equals(this.semaphores.update(this.key, false, (semaphore, now) -> {
			if (semaphore.holders.remove(this) == null) {
				return false;
			}
			semaphore.freed = true;
			return true;
		}));
	}

}
