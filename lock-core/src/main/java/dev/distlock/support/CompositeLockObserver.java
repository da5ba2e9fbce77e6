package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import dev.distlock.Lease;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Several {@link LockObserver}s as one: each is told in order, and one that throws is
 * logged and does not keep the others, or the caller, from going on.
 */
final class CompositeLockObserver implements LockObserver {

	private static final Log logger = LogFactory.getLog(CompositeLockObserver.class);

	private final List<LockObserver> observers;

	CompositeLockObserver(List<LockObserver> observers) {
		this.observers = observers;
	}

	@Override
	public Acquisition acquiring(String key, @Nullable String name, boolean fair) {
		List<Acquisition> acquisitions = new ArrayList<>(this.observers.size());
		for (LockObserver observer : this.observers) {
			safely(() -> acquisitions.add(observer.acquiring(key, name, fair)));
		}
		return new Acquisition() {

			@Override
			public Holding acquired(Lease lease) {
				List<Holding> holdings = new ArrayList<>(acquisitions.size());
				each(acquisitions, (acquisition) -> holdings.add(acquisition.acquired(lease)));
				return (outcome, error) -> each(holdings, (holding) -> holding.ended(outcome, error));
			}

			@Override
			public void notAcquired(AcquireOutcome outcome, @Nullable Throwable error) {
				each(acquisitions, (acquisition) -> acquisition.notAcquired(outcome, error));
			}

		};
	}

	@Override
	public void leaseLost(Lease lease, @Nullable String name, LossReason reason) {
		each(this.observers, (observer) -> observer.leaseLost(lease, name, reason));
	}

	private static <T> void each(List<T> targets, Consumer<T> call) {
		for (T target : targets) {
			safely(() -> call.accept(target));
		}
	}

	static void safely(Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			logger.error("A LockObserver failed; the lock operation goes on", ex);
		}
	}

}
