package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;

/**
 * The in-memory store seen through the bare SPI (no signals, no fair queue), counting
 * renewals and releases, and able to answer one acquire late: after the lease it was
 * granted could already have run out, as a reply stuck in a slow network would.
 */
final class ObservedProvider implements LockProvider {

	final InMemoryLockProvider store = new InMemoryLockProvider();

	final AtomicInteger renewals = new AtomicInteger();

	final AtomicInteger lateReleases = new AtomicInteger();

	volatile boolean answerNextAcquireLate;

	volatile long lateToken;

	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> tryLock(request.key(), request.leaseTime()));
	}

	private LockAttempt tryLock(String key, Duration leaseTime) {
		long sent = System.nanoTime();
		LockAttempt attempt = LockAttempt.join(this.store.tryLock(LockRequest.exclusive(key, leaseTime)));
		if (!(attempt instanceof LockAttempt.Acquired acquired)) {
			return attempt;
		}
		boolean late = this.answerNextAcquireLate;
		this.answerNextAcquireLate = false;
		if (late) {
			// The fault itself: the reply is held back until the lease is over.
			long until = sent + leaseTime.toNanos() + 1_000_000;
			for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
				LockSupport.parkNanos(left);
			}
			this.lateToken = acquired.handle().fencingToken();
		}
		return new LockAttempt.Acquired(new Observed(acquired.handle(), late));
	}

	@Override
	public Duration callTimeout() {
		return this.store.callTimeout();
	}

	private final class Observed extends DelegatingHandle {

		private final boolean late;

		Observed(LockHandle handle, boolean late) {
			super(handle);
			this.late = late;
		}

		@Override
		public boolean renew(Duration leaseTime) {
			ObservedProvider.this.renewals.incrementAndGet();
			return super.renew(leaseTime);
		}

		@Override
		public boolean release() {
			if (this.late) {
				ObservedProvider.this.lateReleases.incrementAndGet();
			}
			return super.release();
		}

	}

}
