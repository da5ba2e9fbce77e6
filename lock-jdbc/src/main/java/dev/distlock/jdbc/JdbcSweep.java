package dev.distlock.jdbc;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The background sweep of idle rows: the lock table's rows whose lease ran out more than
 * the sweep age ago, and the idle rows of the family's tables (read holds and intents,
 * permits and semaphores, latches); once an hour, at most once per sweep age.
 */
final class JdbcSweep {

	// Under the provider's category, where the sweep was always logged.
	private static final Log logger = LogFactory.getLog(JdbcLockProvider.class);

	private final JdbcMutexes mutexes;

	private final JdbcReadWriteLocks readWrite;

	private final JdbcSemaphores semaphores;

	private final JdbcLatches latches;

	private final String tableName;

	private final Duration sweepAfter;

	JdbcSweep(JdbcMutexes mutexes, JdbcReadWriteLocks readWrite, JdbcSemaphores semaphores, JdbcLatches latches,
			String tableName, Duration sweepAfter) {
		this.mutexes = mutexes;
		this.readWrite = readWrite;
		this.semaphores = semaphores;
		this.latches = latches;
		this.tableName = tableName;
		this.sweepAfter = sweepAfter;
	}

	/** Runs the sweep in {@code calls}' background, at a random first delay. */
	void schedule(JdbcCalls calls) {
		long sweepEvery = Math.min(TimeUnit.HOURS.toNanos(1), this.sweepAfter.toNanos());
		calls.scheduler()
			.scheduleWithFixedDelay(() -> calls.background(this::sweepQuietly),
					ThreadLocalRandom.current().nextLong(sweepEvery), sweepEvery, TimeUnit.NANOSECONDS);
	}

	/** See {@link JdbcLockProvider#sweep()}. */
	int locks() {
		return this.mutexes.sweep(JdbcCalls.micros(this.sweepAfter));
	}

	/**
	 * Deletes permits whose lease ran out, semaphores without permits idle for longer
	 * than {@code idle}, and latches expired for longer than {@code idle}.
	 * @return the number of rows deleted
	 */
	int family(Duration idle) {
		long idleMicros = JdbcCalls.micros(idle);
		return this.semaphores.sweep(idleMicros) + this.latches.sweep(idleMicros);
	}

	private void sweepQuietly() {
		try {
			int swept = locks() + family(this.sweepAfter);
			if (swept > 0 && logger.isDebugEnabled()) {
				logger.debug("Swept " + swept + " idle lock rows from " + this.tableName);
			}
			this.readWrite.sweep(JdbcCalls.micros(this.sweepAfter));
		}
		catch (RuntimeException ex) {
			logger.debug("Could not sweep idle lock rows; trying again later", ex);
		}
	}

}
