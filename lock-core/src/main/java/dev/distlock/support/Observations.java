package dev.distlock.support;

import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import org.jspecify.annotations.Nullable;

/** What a template tells its {@link LockObserver} of acquisitions and losses. */
final class Observations {

	private Observations() {
	}

	/**
	 * Tells the observer how an acquisition ended.
	 * @return the lease; throws the failure, if any
	 */
	static @Nullable ManagedLease ended(LockObserver.Acquisition acquisition, @Nullable ManagedLease lease,
			@Nullable Throwable failure, boolean tryOnly) {
		if (failure != null) {
			RuntimeException ex = unwrapped(failure);
			LockObserver.AcquireOutcome outcome = (ex instanceof LockAcquisitionException)
					? (Thread.currentThread().isInterrupted() || ex.getCause() instanceof InterruptedException)
							? LockObserver.AcquireOutcome.INTERRUPTED : LockObserver.AcquireOutcome.TIMEOUT
					: LockObserver.AcquireOutcome.ERROR;
			CompositeLockObserver.safely(() -> acquisition.notAcquired(outcome, ex));
			throw ex;
		}
		if (lease == null) {
			LockObserver.AcquireOutcome outcome = tryOnly ? LockObserver.AcquireOutcome.SKIPPED
					: LockObserver.AcquireOutcome.TIMEOUT;
			CompositeLockObserver.safely(() -> acquisition.notAcquired(outcome, null));
			return null;
		}
		CompositeLockObserver.safely(() -> lease.observe(acquisition.acquired(lease)));
		return lease;
	}

	/**
	 * A multi-key acquisition as the observer sees it: one acquisition per key taken (a
	 * re-entered key is none), told once the attempt has ended.
	 * @param reentrant the lease a key re-enters, if any
	 */
	static @Nullable DefaultMultiLease acquireAll(LockObserver observer, MultiKeyAcquirer acquirer, List<String> keys,
			LockSettings settings, boolean tryOnly, Function<String, @Nullable ManagedLease> reentrant) {
		if (observer == LockObserver.NONE) {
			return acquirer.acquire(keys, settings);
		}
		List<String> taken = keys.stream().filter((key) -> reentrant.apply(key) == null).toList();
		List<LockObserver.Acquisition> acquisitions = taken.stream()
			.map((key) -> observer.acquiring(key, settings.name(), false))
			.toList();
		DefaultMultiLease lease;
		try {
			lease = acquirer.acquire(keys, settings);
		}
		catch (RuntimeException ex) {
			LockObserver.AcquireOutcome outcome = (ex instanceof LockAcquisitionException)
					? LockObserver.AcquireOutcome.INTERRUPTED : LockObserver.AcquireOutcome.ERROR;
			acquisitions
				.forEach((acquisition) -> CompositeLockObserver.safely(() -> acquisition.notAcquired(outcome, ex)));
			throw ex;
		}
		if (lease == null) {
			LockObserver.AcquireOutcome outcome = tryOnly ? LockObserver.AcquireOutcome.SKIPPED
					: LockObserver.AcquireOutcome.TIMEOUT;
			acquisitions
				.forEach((acquisition) -> CompositeLockObserver.safely(() -> acquisition.notAcquired(outcome, null)));
			return null;
		}
		for (Lease part : lease.parts()) {
			int index = taken.indexOf(part.key());
			if (index >= 0 && part instanceof ManagedLease managed) {
				LockObserver.Acquisition acquisition = acquisitions.get(index);
				CompositeLockObserver.safely(() -> managed.observe(acquisition.acquired(managed)));
			}
		}
		return lease;
	}

	static RuntimeException unwrapped(Throwable failure) {
		Throwable cause = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		return (cause instanceof RuntimeException runtime) ? runtime : new CompletionException(cause);
	}

	/** Tells the observer of a loss, then the listener. */
	record ObservedLoss(LeaseLossListener listener, LockObserver observer) implements LeaseLossListener {

		@Override
		public void leaseLost(Lease lease, String reason, @Nullable Thread holder) {
			this.listener.leaseLost(lease, reason, holder);
		}

		@Override
		public void leaseLost(Lease lease, LockObserver.LossReason kind, String reason, @Nullable Thread holder) {
			CompositeLockObserver.safely(() -> this.observer.leaseLost(lease,
					(lease instanceof ManagedLease managed) ? managed.name() : null, kind));
			this.listener.leaseLost(lease, kind, reason, holder);
		}

	}

}
