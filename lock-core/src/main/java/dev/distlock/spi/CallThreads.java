package dev.distlock.spi;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads of a store's own for its calls that block, offered as
 * {@link LockProvider#callExecutor()}: at most a fixed number at once, each started when
 * a call finds none idle and ended after a while without work, daemon, and named after
 * the store, so that a thread dump tells whose call is stuck. Calls beyond the bound
 * queue; each is still bounded by the store timeout once it runs.
 */
public final class CallThreads implements Executor, AutoCloseable {

	private static final long KEEP_ALIVE_SECONDS = 10;

	private final ThreadPoolExecutor threads;

	/**
	 * @param namePrefix the threads' name, before a number ({@code "distlock-jdbc-"})
	 * @param max how many calls run at once: more than the store's connections buys
	 * nothing
	 */
	public CallThreads(String namePrefix, int max) {
		if (max < 1) {
			throw new IllegalArgumentException("At least one call thread is needed, but max was " + max);
		}
		AtomicInteger count = new AtomicInteger();
		this.threads = new ThreadPoolExecutor(max, max, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), (runnable) -> {
					Thread thread = new Thread(runnable, namePrefix + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
		this.threads.allowCoreThreadTimeOut(true);
	}

	/**
	 * Runs {@code call} on one of the threads.
	 * @throws RejectedExecutionException once closed
	 */
	@Override
	public void execute(Runnable call) {
		this.threads.execute(call);
	}

	/**
	 * Takes no more calls; those already queued still run (against a closed store they
	 * fail at once), so that every caller gets an answer.
	 */
	@Override
	public void close() {
		this.threads.shutdown();
	}

}
