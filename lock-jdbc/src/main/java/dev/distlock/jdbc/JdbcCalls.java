package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Statements on the application's {@link DataSource}, each bounded by the store timeout
 * whatever the pool's or the driver's timeouts (Hikari waits 30 s for a connection; a
 * socket to a hung server may wait forever).
 *
 * <p>
 * Each call runs on a worker thread of its own, which borrows a connection for that one
 * statement (two for a first acquisition on MariaDB) in autocommit and gives it back. The
 * worker thread has no transaction bound to it, so Spring's {@code DataSourceUtils} hands
 * it a connection of the pool, never the caller's transactional one: a lock taken inside
 * {@code @Transactional} neither waits for the commit nor vanishes with a rollback. The
 * caller waits for the reply until its deadline and then gets a
 * {@link LockBackendException}; at the same deadline a watchdog aborts the connection
 * ({@link Connection#abort}), which frees the worker and the pool's slot even when the
 * server does not answer. An acquisition whose caller gave up (timeout or interrupt) is
 * undone by its unique owner, so it blocks nobody for a whole lease.
 */
final class JdbcCalls implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(JdbcCalls.class);

	/** Calls in flight at most; beyond it (a hung database), calls fail at once. */
	private static final int MAX_WORKERS = 64;

	/** Attempts of one call on connections that turn out dead, within its deadline. */
	private static final int MAX_ATTEMPTS = 16;

	private final JdbcTemplate jdbc;

	private final Duration timeout;

	private final String database;

	private final ThreadPoolExecutor workers;

	private final ScheduledExecutorService watchdog;

	JdbcCalls(DataSource dataSource, Duration timeout, String database) {
		this.jdbc = new JdbcTemplate(dataSource);
		this.timeout = timeout;
		this.database = database;
		AtomicInteger threads = new AtomicInteger();
		this.workers = new ThreadPoolExecutor(0, MAX_WORKERS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> daemon(runnable, "distlock-jdbc-" + threads.incrementAndGet()));
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1,
				(runnable) -> daemon(runnable, "distlock-jdbc-watchdog"));
		scheduler.setRemoveOnCancelPolicy(true);
		this.watchdog = scheduler;
	}

	static Thread daemon(Runnable runnable, String name) {
		Thread thread = new Thread(runnable, name);
		thread.setDaemon(true);
		return thread;
	}

	Duration timeout() {
		return this.timeout;
	}

	ScheduledExecutorService scheduler() {
		return this.watchdog;
	}

	/**
	 * Runs {@code work} on a borrowed connection and waits for its result at most the
	 * store timeout.
	 * @param key the lock key, for messages
	 * @param operation what the call does, for messages ("acquire", "release")
	 * @param abandoned when the caller gave up on a call that may have taken a lock:
	 * called with its result, or with null when its outcome is unknown, to undo it
	 */
	<T> T call(String key, String operation, Work<T> work, @Nullable Consumer<@Nullable T> abandoned) {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		CompletableFuture<T> reply = new CompletableFuture<>();
		try {
			this.workers.execute(() -> run(work, reply, deadline, abandoned));
		}
		catch (RejectedExecutionException ex) {
			throw new LockBackendException(key, "Cannot " + operation + " lock '" + key + "': " + MAX_WORKERS
					+ " calls to " + this.database + " are still waiting for it to answer", ex);
		}
		try {
			return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			if (giveUp(reply)) {
				throw new LockBackendException(key, this.database + " did not answer within " + this.timeout.toMillis()
						+ "ms (distributed-lock.store-timeout) to " + operation + " lock '" + key + "'", ex);
			}
			return reply.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			if (giveUp(reply)) {
				throw new LockBackendException(key,
						"Interrupted while waiting for " + this.database + " to " + operation + " lock '" + key + "'",
						ex);
			}
			return reply.join();
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			throw new LockBackendException(key, this.database + " failed to " + operation + " lock '" + key + "': "
					+ mostSpecific(cause).getMessage(), cause);
		}
	}

	/** Whether the caller gave up before the reply came (false: it came just now). */
	private static boolean giveUp(CompletableFuture<?> reply) {
		return reply.completeExceptionally(new CancellationException("the caller gave up"));
	}

	private <T> void run(Work<T> work, CompletableFuture<T> reply, long deadline,
			@Nullable Consumer<@Nullable T> abandoned) {
		if (reply.isDone()) {
			// The caller gave up before this call started; nothing was sent.
			return;
		}
		T result;
		try {
			result = execute(work, deadline);
		}
		catch (RuntimeException ex) {
			if (!reply.completeExceptionally(ex) && abandoned != null) {
				abandoned.accept(null);
			}
			return;
		}
		if (!reply.complete(result) && abandoned != null) {
			abandoned.accept(result);
		}
	}

	/**
	 * Runs {@code work} on the calling thread on a borrowed connection in autocommit; a
	 * watchdog aborts the connection at {@code deadline}.
	 */
	<T> T execute(Work<T> work, long deadline) {
		for (int attempt = 1;; attempt++) {
			try {
				return executeOnce(work, deadline);
			}
			catch (DataAccessException ex) {
				if (!retryable(ex) || attempt >= MAX_ATTEMPTS || deadline - System.nanoTime() <= 0) {
					throw ex;
				}
				// Connections the server or the network ended while they sat in the pool
				// (a pool hands out a recently used one unchecked), or a deadlock victim:
				// again on another connection. The store's statements are safe to re-run.
			}
		}
	}

	/**
	 * A connection that failed (SQL state class 08, PostgreSQL's 57P01 "terminating
	 * connection due to administrator command" and its kin, or the driver says so), or a
	 * statement rolled back as a deadlock or serialization victim (class 40).
	 */
	static boolean retryable(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLNonTransientConnectionException || cause instanceof SQLRecoverableException
					|| cause instanceof SQLTransientConnectionException
					|| cause instanceof SQLTransactionRollbackException) {
				return true;
			}
			if (cause instanceof SQLException sql && sql.getSQLState() != null && (sql.getSQLState().startsWith("08")
					|| sql.getSQLState().startsWith("40") || sql.getSQLState().startsWith("57P"))) {
				return true;
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return false;
	}

	private <T> T executeOnce(Work<T> work, long deadline) {
		return this.jdbc.execute((ConnectionCallback<T>) (connection) -> {
			AtomicReference<@Nullable Connection> inUse = new AtomicReference<>(connection);
			long delay = deadline - System.nanoTime();
			if (delay <= 0) {
				throw new SQLException("No time left for the statement after a connection was obtained");
			}
			ScheduledFuture<?> abort = this.watchdog.schedule(() -> abort(inUse), delay, TimeUnit.NANOSECONDS);
			try {
				if (!connection.getAutoCommit()) {
					// The pool resets it when the connection goes back.
					connection.setAutoCommit(true);
				}
				return work.run(connection);
			}
			finally {
				inUse.set(null);
				abort.cancel(false);
			}
		});
	}

	/**
	 * Runs {@code work} in the background, bounded as any call, for clean-up nobody waits
	 * for.
	 */
	void background(String what, Work<?> work) {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		try {
			this.workers.execute(() -> {
				try {
					execute(work, deadline);
				}
				catch (RuntimeException ex) {
					logger.debug("Could not " + what, ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			logger.debug("Could not " + what, ex);
		}
	}

	private void abort(AtomicReference<@Nullable Connection> inUse) {
		Connection connection = inUse.getAndSet(null);
		if (connection == null) {
			return;
		}
		try {
			connection.abort(Runnable::run);
		}
		catch (SQLException | RuntimeException ex) {
			logger.debug("Could not abort a JDBC connection whose statement outlived the store timeout", ex);
		}
	}

	private static Throwable mostSpecific(Throwable ex) {
		Throwable cause = ex;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	@Override
	public void close() {
		this.workers.shutdown();
		this.watchdog.shutdownNow();
	}

	/** Statements on one borrowed connection. */
	@FunctionalInterface
	interface Work<T> {

		T run(Connection connection) throws SQLException;

	}

}
