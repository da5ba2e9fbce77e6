package dev.distlock.inmemory;

import java.time.Duration;

/** One read hold of a lock's key. */
final class ReadHold extends SharedHold {

	private final KeySpace<LockEntry> locks;

	ReadHold(KeySpace<LockEntry> locks, String key, long fencingToken) {
		super(key, fencingToken);
		this.locks = locks;
	}

	@Override
	public boolean renew(Duration leaseTime) {
		long lease = KeySpace.positive(leaseTime);
		return Boolean.TRUE.equals(this.locks.update(this.key, false,
				(entry, now) -> entry.readers.computeIfPresent(this, (hold, deadline) -> now + lease) != null));
	}

	@Override
	public boolean release() {
		return Boolean.TRUE.equals(this.locks.update(this.key, false, (entry, now) -> {
			if (entry.readers.remove(this) == null) {
				return false;
			}
			if (entry.readers.isEmpty()) {
				entry.freed = true;
			}
			return true;
		}));
	}

}
