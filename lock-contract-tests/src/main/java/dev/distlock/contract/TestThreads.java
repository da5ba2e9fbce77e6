package dev.distlock.contract;

import java.util.concurrent.Executor;

/**
 * Threads for a test's concurrent callers.
 * <p>
 * {@code CompletableFuture.runAsync(task)} without an executor runs on the common
 * fork-join pool. From JDK 25 on, that pool is used even when its parallelism is one (a
 * machine with two cores), so a second caller that blocks waits for the first to finish
 * instead of running beside it: a test of waiting then measures the pool, not the lock.
 * Each task here gets a daemon thread of its own.
 */
public final class TestThreads {

	/** Runs each task on a new daemon thread. */
	public static final Executor EACH = (task) -> {
		Thread thread = new Thread(task, "test-caller");
		thread.setDaemon(true);
		thread.start();
	};

	private TestThreads() {
	}

}
