package dev.distlock.config;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;

/**
 * A store in a map, for tests that need a real one but no server: it keeps the SPI's
 * promises (a fresh owner per attempt, renew and release only by the owner and only
 * before expiry, a second release deletes nothing, tokens that only grow), with leases
 * measured on {@link System#nanoTime()}.
 */
final class MapLockProvider implements LockProvider {

	private final ConcurrentMap<String, Entry> locks = new ConcurrentHashMap<>();

	private final AtomicLong owners = new AtomicLong();

	private final AtomicLong tokens = new AtomicLong();

	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> {
			if (request.kind() != LockKind.EXCLUSIVE) {
				throw Capabilities.unsupported(this, request.kind(), request.key());
			}
			return tryLock(request.key(), request.leaseTime());
		});
	}

	private LockAttempt tryLock(String key, Duration leaseTime) {
		long owner = this.owners.incrementAndGet();
		long[] remaining = new long[1];
		Entry entry = this.locks.compute(key, (name, current) -> {
			long now = System.nanoTime();
			if (current != null && !current.expired(now)) {
				remaining[0] = current.expiresAt - now;
				return current;
			}
			return new Entry(owner, this.tokens.incrementAndGet(), now + leaseTime.toNanos());
		});
		if (entry.owner != owner) {
			return new LockAttempt.Busy(Duration.ofNanos(remaining[0]));
		}
		return new LockAttempt.Acquired(new Handle(key, entry));
	}

	@Override
	public String storeName() {
		return "map";
	}

	private record Entry(long owner, long token, long expiresAt) {

		boolean expired(long now) {
			return now - this.expiresAt >= 0;
		}

	}

	private final class Handle implements LockHandle {

		private final String key;

		private final Entry acquired;

		Handle(String key, Entry acquired) {
			this.key = key;
			this.acquired = acquired;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.acquired.token;
		}

		@Override
		public boolean renew(Duration leaseTime) {
			boolean[] renewed = new boolean[1];
			MapLockProvider.this.locks.computeIfPresent(this.key, (name, current) -> {
				long now = System.nanoTime();
				if (current.owner != this.acquired.owner || current.expired(now)) {
					return current;
				}
				renewed[0] = true;
				return new Entry(current.owner, current.token, now + leaseTime.toNanos());
			});
			return renewed[0];
		}

		@Override
		public boolean release() {
			boolean[] released = new boolean[1];
			MapLockProvider.this.locks.computeIfPresent(this.key, (name, current) -> {
				if (current.owner != this.acquired.owner) {
					return current;
				}
				released[0] = !current.expired(System.nanoTime());
				return null;
			});
			return released[0];
		}

	}

}
