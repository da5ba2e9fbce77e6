package dev.distlock.support;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A template's clean-up calls, whose outcome no caller waits for: on a few daemon threads
 * of its own, never the common pool; a failure is logged, not thrown.
 */
final class Cleanup implements WaitLoop.Background, Executor {

	/** Under the template's name, where operators look for its clean-up. */
	private static final Log logger = LogFactory.getLog(DefaultLockTemplate.class);

	private final ThreadPoolExecutor threads = new ThreadPoolExecutor(0, 2, 10, TimeUnit.SECONDS,
			new LinkedBlockingQueue<>(), (runnable) -> {
				Thread thread = new Thread(runnable, "distlock-cleanup");
				thread.setDaemon(true);
				return thread;
			});

	/** Runs {@code task}, logging its failure with {@code failureMessage}. */
	@Override
	public void run(Runnable task, String failureMessage) {
		try {
			this.threads.execute(() -> {
				try {
					task.run();
				}
				catch (RuntimeException ex) {
					logger.debug(failureMessage, ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			logger.debug(failureMessage + " (the template is closed)", ex);
		}
	}

	/**
	 * Runs {@code command} as it is.
	 * @throws RejectedExecutionException once shut down
	 */
	@Override
	public void execute(Runnable command) {
		this.threads.execute(command);
	}

	/** Takes no more calls; those queued still run. */
	void shutdown() {
		this.threads.shutdown();
	}

}
