package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition. The handle itself is the owner: identity, not a name, decides whether
 * it still holds the key.
 *
 * @param lastToken the last token of the block it reserved
 * @param waiterId the fair waiter that took the lock, if any
 * @param waitedAtRelease whether a waiter had marked the key when it was released
 */
record Holder(KeySpace<LockEntry> locks, String key, long fencingToken, long lastToken, @Nullable String waiterId,
		AtomicBoolean waitedAtRelease) implements TokenBlock {

	@Override
	public boolean renew(Duration leaseTime) {
		long lease = KeySpace.positive(leaseTime);
		return Boolean.TRUE.equals(this.locks.update(this.key, false, (entry, now) -> {
			if (entry.holder != this) {
				return false;
			}
			entry.deadline = now + lease;
			return true;
		}));
	}

	@Override
	public boolean release() {
		return Boolean.TRUE.equals(this.locks.update(this.key, false, (entry, now) -> {
			if (entry.holder != this) {
				return false;
			}
			entry.holder = null;
			entry.freed = true;
			this.waitedAtRelease.set(entry.waited);
			return true;
		}));
	}

	@Override
	public boolean releasedToWaiters() {
		return this.waitedAtRelease.get();
	}

	@Override
	public boolean stillHeld() {
		return Boolean.TRUE.equals(this.locks.update(this.key, false, (entry, now) -> entry.holder == this));
	}

	@Override
	public String toString() {
		return "InMemoryLock[key=" + this.key + ", token=" + this.fencingToken + "]";
	}

}
