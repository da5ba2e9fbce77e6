package dev.distlock.support;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one scheduler that renews every held lease of an application: two daemon threads in all, however many
 * locks are held (no thread or timer per lock). Cancelled tasks are removed at once, so released leases leave
 * nothing behind.
 */
public final class RenewalScheduler implements AutoCloseable {

	private final ScheduledThreadPoolExecutor executor;

	public RenewalScheduler() {
		AtomicInteger count = new AtomicInteger();
		this.executor = new ScheduledThreadPoolExecutor(2, (runnable) -> {
			Thread thread = new Thread(runnable, "distlock-renewal-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		this.executor.setRemoveOnCancelPolicy(true);
		this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
	}

	ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
		return this.executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
	}

	/** Renewal tasks waiting to run; a released lease leaves none. */
	public int pendingTasks() {
		return this.executor.getQueue().size();
	}

	/** Stops renewing; held leases then expire after their lease time. */
	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
