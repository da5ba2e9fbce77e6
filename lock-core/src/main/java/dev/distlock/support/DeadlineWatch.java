package dev.distlock.support;

import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Watches one lease's deadline on the scheduler's collecting thread, which never waits
 * for the store: re-arms itself while renewals keep moving the deadline, and calls
 * {@code expired} once it passes, so a lease is declared lost on time even while a
 * renewal is stuck.
 */
final class DeadlineWatch {

	private final RenewalScheduler scheduler;

	private final LongSupplier deadlineNanos;

	private final BooleanSupplier held;

	private final Runnable expired;

	private volatile RenewalScheduler.@Nullable DeadlineCheck next;

	private volatile boolean cancelled;

	/**
	 * @param deadlineNanos the lease's current deadline on the monotonic clock
	 * @param held whether the lease is still held (the watch ends when not)
	 * @param expired called once the deadline has passed while held
	 */
	DeadlineWatch(RenewalScheduler scheduler, LongSupplier deadlineNanos, BooleanSupplier held, Runnable expired) {
		this.scheduler = scheduler;
		this.deadlineNanos = deadlineNanos;
		this.held = held;
		this.expired = expired;
	}

	void start() {
		long delay = Math.max(0, this.deadlineNanos.getAsLong() - System.nanoTime());
		this.next = this.scheduler.scheduleDeadlineCheck(this::check, delay);
	}

	private void check() {
		if (!this.held.getAsBoolean() || this.cancelled) {
			return;
		}
		if (System.nanoTime() - this.deadlineNanos.getAsLong() >= 0) {
			this.expired.run();
			return;
		}
		start();
		// A cancel that read the check before start() replaced it: this one goes too.
		if (this.cancelled) {
			cancelNext();
		}
	}

	/** Ends the watch, without waiting, so an event loop can release a lock. */
	void cancel() {
		this.cancelled = true;
		cancelNext();
	}

	private void cancelNext() {
		RenewalScheduler.DeadlineCheck check = this.next;
		if (check != null) {
			this.scheduler.cancel(check);
		}
	}

}
