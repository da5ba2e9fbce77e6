package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockBackendException;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store seen through the SPI of plain locks with release signals and local
 * hand-over, with faults a test switches on: renewals, releases and owner checks that
 * reach the store late (yet within the call timeout), as on a slow network or a stalling
 * server, and releases that fail as they do while a store cannot be reached. Acquires are
 * never slowed and never fail.
 */
final class FaultyStore implements LocalHandover, ReleaseSignalling {

	final InMemoryLockProvider store = new InMemoryLockProvider();

	private final Duration callTimeout;

	/** How late renewals, releases and owner checks reach the store. */
	volatile Duration latency = Duration.ZERO;

	/** How late owner checks reach the store, if not {@link #latency}. */
	volatile @Nullable Duration checkLatency;

	/** Releases fail, reaching nothing, as while the store cannot be reached. */
	volatile boolean unreachable;

	/** Owner checks sent. */
	final AtomicInteger checks = new AtomicInteger();

	/** Releases that reached the store. */
	final AtomicInteger releases = new AtomicInteger();

	/** Releases that failed because the store was unreachable. */
	final AtomicInteger failedReleases = new AtomicInteger();

	FaultyStore(Duration callTimeout) {
		this.callTimeout = callTimeout;
	}

	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> faulty(LockAttempt.join(this.store.tryLock(request))));
	}

	@Override
	public ReleaseSignals releaseSignals() {
		return this.store.releaseSignals();
	}

	@Override
	public Duration callTimeout() {
		return this.callTimeout;
	}

	@Override
	public String storeName() {
		return "faulty in-memory";
	}

	private LockAttempt faulty(LockAttempt attempt) {
		return (attempt instanceof LockAttempt.Acquired acquired)
				? new LockAttempt.Acquired(new Handle((TokenBlock) acquired.handle())) : attempt;
	}

	/**
	 * The fault itself: the call travels for {@code latency} before it reaches the store.
	 */
	private static void travel(Duration latency) {
		long until = System.nanoTime() + latency.toNanos();
		for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime()) {
			LockSupport.parkNanos(left);
		}
	}

	private final class Handle extends DelegatingHandle implements TokenBlock {

		private final TokenBlock block;

		Handle(TokenBlock block) {
			super(block);
			this.block = block;
		}

		@Override
		public long lastToken() {
			return this.block.lastToken();
		}

		@Override
		public boolean renew(Duration leaseTime) {
			travel(FaultyStore.this.latency);
			return super.renew(leaseTime);
		}

		@Override
		public boolean release() {
			travel(FaultyStore.this.latency);
			if (FaultyStore.this.unreachable) {
				FaultyStore.this.failedReleases.incrementAndGet();
				throw new LockBackendException(key(), "The store could not be reached to release lock '" + key() + "'",
						new java.net.ConnectException("Connection refused"));
			}
			FaultyStore.this.releases.incrementAndGet();
			return super.release();
		}

		@Override
		public boolean stillHeld() {
			FaultyStore.this.checks.incrementAndGet();
			Duration check = FaultyStore.this.checkLatency;
			travel((check != null) ? check : FaultyStore.this.latency);
			return this.block.stillHeld();
		}

		@Override
		public boolean releasedToWaiters() {
			return this.block.releasedToWaiters();
		}

	}

}
