package dev.distlock.support;

import java.util.concurrent.TimeUnit;

/**
 * The driver of waits that hold no thread: steps run on a few worker threads of the
 * template's own, and pauses are timed by the shared {@link RenewalScheduler}, whose
 * collecting thread only hands a due step to a worker. So a store call that blocks (a
 * JDBC statement) runs on a worker and never delays the timers of other waiters, and any
 * number of waiters costs a bounded number of threads.
 */
final class SharedWaitDriver implements WaitDriver, AutoCloseable {

	/**
	 * Store calls of this template's waits on the wire at once: each blocks a worker for
	 * a round trip, so fewer would cap how many callers take different keys at once.
	 */
	private static final int WORKERS = 16;

	private static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final RenewalScheduler scheduler;

	private final WaitWorkers workers = new WaitWorkers("distlock-wait-", WORKERS, KEEP_ALIVE_NANOS);

	private final WaitDriver granting = new WaitDriver() {

		@Override
		public void execute(Runnable step) {
			SharedWaitDriver.this.execute(step);
		}

		@Override
		public Timer schedule(Runnable step, long delayNanos) {
			return SharedWaitDriver.this.schedule(step, delayNanos);
		}

		@Override
		public boolean grantsWhereAnswered() {
			return true;
		}

	};

	SharedWaitDriver(RenewalScheduler scheduler) {
		this.scheduler = scheduler;
	}

	/** Runs {@code step} on a worker (on the caller once the template is closed). */
	@Override
	public void execute(Runnable step) {
		this.workers.execute(step);
	}

	@Override
	public Timer schedule(Runnable step, long delayNanos) {
		RenewalScheduler.DeadlineCheck check = this.scheduler.scheduleTask(() -> execute(step), delayNanos);
		return () -> this.scheduler.cancel(check);
	}

	/**
	 * This driver, except that a grant ends a wait on the thread the store answered on
	 * ({@link WaitDriver#grantsWhereAnswered()}).
	 */
	WaitDriver grantingWhereAnswered() {
		return this.granting;
	}

	@Override
	public void close() {
		this.workers.close();
	}

}
