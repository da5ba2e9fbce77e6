package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.LossReporting;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store behind handles that report their own loss ({@link LossReporting}),
 * as a store whose lease is a session does: {@link #reportLoss} ends the lease in the
 * store and tells the handle's listener on a thread of the provider's.
 */
final class ReportingProvider implements LockProvider, AutoCloseable {

	final InMemoryLockProvider store = new InMemoryLockProvider();

	final List<Reporting> handles = new CopyOnWriteArrayList<>();

	private final ExecutorService reporter = Executors.newSingleThreadExecutor();

	/** Set to report every new acquisition lost before anyone can listen. */
	volatile @Nullable String lostOnAcquire;

	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> tryLock(request.key(), request.leaseTime()));
	}

	private LockAttempt tryLock(String key, Duration leaseTime) {
		LockAttempt attempt = LockAttempt.join(this.store.tryLock(LockRequest.exclusive(key, leaseTime)));
		if (!(attempt instanceof LockAttempt.Acquired acquired)) {
			return attempt;
		}
		Reporting handle = new Reporting(acquired.handle());
		this.handles.add(handle);
		String lost = this.lostOnAcquire;
		if (lost != null) {
			reportLoss(handle, lost);
		}
		return new LockAttempt.Acquired(handle);
	}

	/** Ends the lease of {@code handle} in the store and reports it lost. */
	void reportLoss(Reporting handle, String reason) {
		this.store.expire(handle.key());
		synchronized (handle) {
			handle.lostReason = reason;
			if (handle.listener != null) {
				Consumer<String> listener = handle.listener;
				this.reporter.execute(() -> listener.accept(reason));
			}
		}
	}

	@Override
	public void close() {
		this.reporter.shutdownNow();
	}

	final class Reporting extends DelegatingHandle implements LossReporting {

		private @Nullable Consumer<String> listener;

		private @Nullable String lostReason;

		private volatile boolean released;

		final AtomicInteger registrations = new AtomicInteger();

		Reporting(LockHandle handle) {
			super(handle);
		}

		@Override
		public synchronized void onLoss(Consumer<String> listener) {
			this.registrations.incrementAndGet();
			this.listener = (reason) -> {
				if (!this.released) {
					listener.accept(reason);
				}
			};
			String lost = this.lostReason;
			if (lost != null) {
				Consumer<String> registered = this.listener;
				ReportingProvider.this.reporter.execute(() -> registered.accept(lost));
			}
		}

		@Override
		public boolean release() {
			this.released = true;
			return super.release();
		}

	}

}
