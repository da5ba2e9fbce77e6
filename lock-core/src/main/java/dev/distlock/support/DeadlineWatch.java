package dev.distlock.support;

import java.util.concurrent.locks.ReentrantLock;
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

	/** Guards re-arming against {@link #cancel()}; never held while waiting on I/O. */
	private final ReentrantLock lock = new ReentrantLock();

	private volatile RenewalScheduler.@Nullable DeadlineCheck next;

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
		if (!this.held.getAsBoolean()) {
			return;
		}
		if (System.nanoTime() - this.deadlineNanos.getAsLong() >= 0) {
			this.expired.run();
			return;
		}
		this.lock.lock();
		try {
			if (this.held.getAsBoolean()) {
				start();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	void cancel() {
		this.lock.lock();
		try {
			RenewalScheduler.DeadlineCheck check = this.next;
			if (check != null) {
				this.scheduler.cancel(check);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

}
