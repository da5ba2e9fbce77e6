package dev.distlock.support;

import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The driver of waits that hold no thread: steps run on a few worker threads of the
 * template's own, and pauses are timed by the shared {@link RenewalScheduler}, whose
 * collecting thread only hands a due step to a worker. So a store call that blocks (a
 * JDBC statement) runs on a worker and never delays the timers of other waiters, and any
 * number of waiters costs a bounded number of threads.
 */
final class SharedWaitDriver implements WaitDriver, AutoCloseable {

	/** Enough for store calls of several hot keys at once; a step itself never waits. */
	private static final int WORKERS = 8;

	private final RenewalScheduler scheduler;

	private final ThreadPoolExecutor workers;

	SharedWaitDriver(RenewalScheduler scheduler) {
		this.scheduler = scheduler;
		AtomicInteger count = new AtomicInteger();
		// A queue whose offer takes no lock: handing a step over never parks the caller,
		// which may be an event loop.
		this.workers = new ThreadPoolExecutor(WORKERS, WORKERS, 10, TimeUnit.SECONDS, new LinkedTransferQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "distlock-wait-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.workers.allowCoreThreadTimeOut(true);
	}

	@Override
	public void execute(Runnable step) {
		try {
			this.workers.execute(step);
		}
		catch (RejectedExecutionException ex) {
			// The template is closing: the step still runs, so its wait ends.
			step.run();
		}
	}

	@Override
	public Timer schedule(Runnable step, long delayNanos) {
		RenewalScheduler.DeadlineCheck check = this.scheduler.scheduleTask(() -> execute(step), delayNanos);
		return () -> this.scheduler.cancel(check);
	}

	@Override
	public void close() {
		this.workers.shutdown();
	}

}
