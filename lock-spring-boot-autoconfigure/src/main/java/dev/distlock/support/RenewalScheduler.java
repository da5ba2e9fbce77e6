package dev.distlock.support;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one scheduler that renews every held lease of an application: two daemon threads
 * for renewals, however many locks are held (no thread or timer per lock), and one
 * watchdog thread that checks lease deadlines.
 *
 * <p>
 * The watchdog never talks to the store, so a renewal stuck on a slow or unreachable
 * Redis cannot delay the moment a lease is declared lost. Cancelled tasks are removed at
 * once, so released leases leave nothing behind.
 */
public final class RenewalScheduler implements AutoCloseable {

	private final ScheduledThreadPoolExecutor renewals;

	private final ScheduledThreadPoolExecutor watchdog;

	public RenewalScheduler() {
		this.renewals = executor(2, "distlock-renewal-");
		this.watchdog = executor(1, "distlock-watchdog-");
	}

	private static ScheduledThreadPoolExecutor executor(int threads, String prefix) {
		AtomicInteger count = new AtomicInteger();
		ThreadFactory factory = (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(threads, factory);
		executor.setRemoveOnCancelPolicy(true);
		executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		return executor;
	}

	ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
		return this.renewals.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
	}

	ScheduledFuture<?> scheduleDeadlineCheck(Runnable task, long delayNanos) {
		return this.watchdog.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
	}

	/** Renewal tasks waiting to run; a released lease leaves none. */
	public int pendingTasks() {
		return this.renewals.getQueue().size();
	}

	/**
	 * Lease deadline checks waiting to run, one per held lease; a released lease leaves
	 * none.
	 */
	public int pendingDeadlineChecks() {
		return this.watchdog.getQueue().size();
	}

	/** Stops renewing; held leases then expire after their lease time. */
	@Override
	public void close() {
		this.renewals.shutdownNow();
		this.watchdog.shutdownNow();
	}

}
