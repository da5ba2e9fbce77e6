package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

/**
 * Statements on the application's {@link DataSource}, each bounded by the store timeout
 * whatever the pool's or the driver's timeouts (Hikari waits 30 s for a connection and 5
 * s to check an idle one; a socket to a hung server may wait forever).
 *
 * <p>
 * Each call borrows a connection for that one statement (two for a first acquisition on
 * MariaDB), runs it in autocommit and gives the connection back. The connection comes
 * from {@link DataSource#getConnection()} itself, never through Spring's
 * {@code DataSourceUtils} (a {@link TransactionAwareDataSourceProxy} is unwrapped), so it
 * is never the caller's transactional one: a lock taken inside {@code @Transactional}
 * neither waits for the commit nor vanishes with a rollback.
 *
 * <p>
 * While the database answers (a call of this provider succeeded within the last
 * {@linkplain #DEFAULT_DIRECT_WINDOW quarter second}), a call runs on the caller's
 * thread: no hand-off between threads, which costs more than the statement's round trip
 * on a small machine. Otherwise, and after any failure, it runs on a worker thread while
 * the caller waits for the reply until its deadline: a pool may check an idle connection
 * on the borrowing thread (Hikari does, for up to 5 s), and only a caller on another
 * thread can give up on that. Either way a watchdog bounds the work: a thread still
 * waiting for the pool when the deadline comes is interrupted (pools give up waiting on
 * an interrupt; the interrupt is cleared again, and an interrupt the caller had is kept),
 * and a connection still running a statement is aborted ({@link Connection#abort}), which
 * fails the statement at once even when the server does not answer, and drops the
 * connection from the pool. Where a driver's abort waits for the read it should end
 * (MariaDB's does), the connection's network timeout, set for the call to just past its
 * deadline and restored after it, ends the read instead. The watchdog scans the calls in
 * flight at a short tick and acts a tick before the deadline; a call costs it no wake-up.
 * An acquisition whose outcome is unknown (an attempt may have run its statement but the
 * call ended without its result: aborted mid-statement, a reply lost and the retries
 * failed, or its caller gave up on the worker) is undone by its unique owner in the
 * background, tried again until it succeeds or the lease it may have taken would have
 * ended, so it blocks nobody for a whole lease.
 *
 * <p>
 * A failure's message names its root cause where the driver or the pool gives one:
 * connection refused, authentication failed, and for a call that got no connection from a
 * HikariCP pool within its deadline, the pool's last failure to connect.
 */
final class JdbcCalls implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(JdbcCalls.class);

	/** Attempts of one call on connections that turn out dead, within its deadline. */
	private static final int MAX_ATTEMPTS = 16;

	/** The watchdog's longest tick. */
	private static final long MAX_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

	/** The first pause before a failed background clean-up is tried again. */
	private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** The longest pause between tries of a background clean-up. */
	private static final long MAX_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	/** Background clean-ups waiting at most; beyond it they are dropped (logged). */
	private static final int MAX_BACKGROUND = 1024;

	/**
	 * Calls on worker threads at most; beyond it (a hung database), calls fail at once.
	 */
	private static final int MAX_WORKERS = 64;

	/**
	 * How long after a successful call the next ones run on their caller's thread.
	 */
	static final Duration DEFAULT_DIRECT_WINDOW = Duration.ofMillis(250);

	private final DataSource dataSource;

	private final Duration timeout;

	/** How long before its deadline the watchdog acts on a call. */
	private final long tickNanos;

	/** The database's name for messages, once known. */
	private volatile String database;

	private final Set<CallInFlight> inFlight = ConcurrentHashMap.newKeySet();

	private final ScheduledExecutorService scheduler;

	private final ThreadPoolExecutor background;

	private final ThreadPoolExecutor workers;

	private final long directWindowNanos;

	/** Until when calls run on their caller's thread (System.nanoTime()). */
	private volatile long directUntil;

	JdbcCalls(DataSource dataSource, Duration timeout, String database) {
		this(dataSource, timeout, database, DEFAULT_DIRECT_WINDOW);
	}

	/**
	 * @param directWindow how long after a successful call the next ones run on their
	 * caller's thread (zero: always on a worker)
	 */
	JdbcCalls(DataSource dataSource, Duration timeout, String database, Duration directWindow) {
		this.dataSource = (dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : dataSource;
		this.timeout = timeout;
		this.tickNanos = Math.max(1, Math.min(MAX_TICK_NANOS, timeout.toNanos() / 20));
		this.database = database;
		ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1,
				(runnable) -> daemon(runnable, "distlock-jdbc-watchdog"));
		scheduler.setRemoveOnCancelPolicy(true);
		this.scheduler = scheduler;
		this.scheduler.scheduleAtFixedRate(this::watch, this.tickNanos, this.tickNanos, TimeUnit.NANOSECONDS);
		AtomicInteger threads = new AtomicInteger();
		this.background = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(MAX_BACKGROUND),
				(runnable) -> daemon(runnable, "distlock-jdbc-background-" + threads.incrementAndGet()));
		this.background.allowCoreThreadTimeOut(true);
		AtomicInteger workerThreads = new AtomicInteger();
		this.workers = new ThreadPoolExecutor(0, MAX_WORKERS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> daemon(runnable, "distlock-jdbc-worker-" + workerThreads.incrementAndGet()));
		this.directWindowNanos = directWindow.toNanos();
		this.directUntil = System.nanoTime();
	}

	static Thread daemon(Runnable runnable, String name) {
		Thread thread = new Thread(runnable, name);
		thread.setDaemon(true);
		return thread;
	}

	Duration timeout() {
		return this.timeout;
	}

	/** Names the database in messages from now on ("PostgreSQL"). */
	void database(String database) {
		this.database = database;
	}

	/** The watchdog's thread, for the provider's periodic work (which must not block). */
	ScheduledExecutorService scheduler() {
		return this.scheduler;
	}

	/** Background clean-ups, bounded as any call; also for the provider's sweep. */
	void background(Runnable task) {
		this.background.execute(task);
	}

	/**
	 * Runs {@code work} on a borrowed connection and returns its result, or throws
	 * {@link LockBackendException}, within the store timeout.
	 * @param key the lock key, for the exception ({@code ""} when the call is about no
	 * lock)
	 * @param operation what the call does, for messages ("acquire lock 'k'", "create the
	 * table 't'")
	 * @param abandoned when a call that may have taken a lock ended without knowing
	 * whether it did: called with its late result, or with null when its outcome is
	 * unknown, to undo it
	 */
	<T> T call(String key, String operation, Work<T> work, @Nullable Consumer<@Nullable T> abandoned) {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		if (System.nanoTime() - this.directUntil < 0) {
			return callOnThisThread(key, operation, work, abandoned, deadline);
		}
		return callOnAWorker(key, operation, work, abandoned, deadline);
	}

	/**
	 * Runs {@code calls}, which makes its own bounded calls, on a worker, for a caller
	 * that does not wait for it there; on the caller's thread when every worker is busy.
	 */
	<T> CompletableFuture<T> onAWorker(Supplier<T> calls) {
		try {
			return CompletableFuture.supplyAsync(calls, this.workers);
		}
		catch (RejectedExecutionException ex) {
			try {
				return CompletableFuture.completedFuture(calls.get());
			}
			catch (RuntimeException failure) {
				return CompletableFuture.failedFuture(failure);
			}
		}
	}

	/**
	 * Runs the call on a worker thread; the caller waits for the reply until the
	 * deadline.
	 */
	private <T> T callOnAWorker(String key, String operation, Work<T> work, @Nullable Consumer<@Nullable T> abandoned,
			long deadline) {
		CompletableFuture<T> reply = new CompletableFuture<>();
		// The worker's call, so that a caller giving up can tell where it was.
		AtomicReference<@Nullable CallInFlight> onTheWorker = new AtomicReference<>();
		try {
			this.workers.execute(() -> {
				if (reply.isDone()) {
					return;
				}
				T result;
				try {
					result = callOnThisThread(key, operation, work, abandoned, deadline, onTheWorker);
				}
				catch (RuntimeException ex) {
					reply.completeExceptionally(ex);
					return;
				}
				if (!reply.complete(result) && abandoned != null) {
					// The caller gave up just before the reply came.
					abandoned.accept(result);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			throw new LockBackendException(key, "Could not " + operation + ": " + MAX_WORKERS + " calls to "
					+ this.database + " are still waiting for it to answer", ex);
		}
		return awaitReply(key, operation, reply, onTheWorker, deadline);
	}

	/**
	 * Waits for a worker's reply until the deadline; a caller giving up at the deadline
	 * completes the reply first, so that a late result goes to the undo instead.
	 */
	private <T> T awaitReply(String key, String operation, CompletableFuture<T> reply,
			AtomicReference<@Nullable CallInFlight> onTheWorker, long deadline) {
		// The caller's interrupt does not end the wait: the call is bounded anyway, and
		// its outcome is the caller's answer. The flag is kept for the caller.
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
				catch (TimeoutException ex) {
					if (reply.completeExceptionally(new CancellationException("the caller gave up"))) {
						this.directUntil = System.nanoTime();
						throw timedOut(key, operation, ex, onTheWorker.get());
					}
				}
				catch (ExecutionException ex) {
					throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
							: new LockBackendException(key, ex.getMessage(), ex);
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private <T> T callOnThisThread(String key, String operation, Work<T> work,
			@Nullable Consumer<@Nullable T> abandoned, long deadline) {
		return callOnThisThread(key, operation, work, abandoned, deadline, null);
	}

	private <T> T callOnThisThread(String key, String operation, Work<T> work,
			@Nullable Consumer<@Nullable T> abandoned, long deadline,
			@Nullable AtomicReference<@Nullable CallInFlight> seen) {
		CallInFlight flight = new CallInFlight(Thread.currentThread(), deadline);
		if (seen != null) {
			seen.set(flight);
		}
		// An interrupt the caller had is kept for it, and not taken for the watchdog's.
		boolean interrupted = Thread.interrupted();
		this.inFlight.add(flight);
		try {
			T result = execute(flight, work);
			this.directUntil = System.nanoTime() + this.directWindowNanos;
			return result;
		}
		catch (SQLException | RuntimeException ex) {
			this.directUntil = System.nanoTime();
			if (flight.mayHaveRun && abandoned != null) {
				// An attempt may have run the statement, whose result never came back.
				abandoned.accept(null);
			}
			if (flight.timedOut()) {
				throw timedOut(key, operation, ex, flight);
			}
			throw new LockBackendException(key,
					"Could not " + operation + " on " + this.database + ": " + Causes.describe(ex), ex);
		}
		finally {
			this.inFlight.remove(flight);
			flight.finish();
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * A call cut off at its deadline, with the most telling cause: for a call still
	 * waiting for the pool, the pool's last failure to connect if it tells one, else the
	 * failure of an earlier attempt of the call (a pool that could not connect, a
	 * connection that broke).
	 */
	private LockBackendException timedOut(String key, String operation, Exception ex, @Nullable CallInFlight flight) {
		String database = this.database;
		String message = Character.toUpperCase(database.charAt(0)) + database.substring(1) + " did not answer within "
				+ this.timeout.toMillis() + "ms (distributed-lock.store-timeout) to " + operation;
		boolean borrowing = flight != null && flight.waitingForThePool();
		String noConnection = !borrowing ? ""
				: Causes.poolStarting(this.dataSource)
						? ": no connection from the pool in that time (it was still opening its first connection)"
						: ": no connection from the pool in that time";
		Throwable poolFailure = borrowing ? Causes.lastConnectionFailure(this.dataSource) : null;
		Throwable cause = (poolFailure != null || flight == null) ? poolFailure : flight.lastFailure;
		if (cause == null) {
			return new LockBackendException(key, message + noConnection, ex);
		}
		String which = (poolFailure != null) ? "the pool's last attempt to connect failed: "
				: "an earlier attempt failed: ";
		LockBackendException timedOut = new LockBackendException(key,
				message + noConnection + ((borrowing) ? "; " : ": ") + which + Causes.describe(cause), cause);
		timedOut.addSuppressed(ex);
		return timedOut;
	}

	/**
	 * Runs {@code work}, again on another connection when one turns out dead, until its
	 * deadline.
	 */
	private <T> T execute(CallInFlight flight, Work<T> work) throws SQLException {
		for (int attempt = 1;; attempt++) {
			try {
				return executeOnce(flight, work);
			}
			catch (SQLException ex) {
				if (!retryable(ex) || attempt >= MAX_ATTEMPTS || flight.timedOut()) {
					throw ex;
				}
				flight.lastFailure = ex;
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

	private <T> T executeOnce(CallInFlight flight, Work<T> work) throws SQLException {
		if (!flight.borrowing()) {
			throw new SQLException("No time left for the statement");
		}
		Connection connection;
		try {
			connection = this.dataSource.getConnection();
		}
		catch (SQLException | RuntimeException ex) {
			flight.borrowed(null);
			throw ex;
		}
		try (connection) {
			if (!flight.borrowed(connection)) {
				throw new SQLException("No time left for the statement after a connection was obtained");
			}
			if (!connection.getAutoCommit()) {
				// The pool resets it when the connection goes back.
				connection.setAutoCommit(true);
			}
			// A driver whose abort cannot end a read already blocked on the socket
			// (MariaDB's waits for that read) still gives up at the socket's timeout,
			// just after the watchdog has tried.
			NetworkTimeout bounded = NetworkTimeout.set(connection, socketTimeoutMillis(flight));
			// A result that came just as the watchdog aborted the connection is still the
			// statement's committed outcome.
			try {
				return work.run(connection);
			}
			catch (SQLException | RuntimeException ex) {
				// The connection broke, or was aborted, after the statement went out: the
				// server may have run and committed it. An error the server answered
				// with means the statement, alone in its transaction, changed nothing.
				flight.mayHaveRun |= retryable(ex) || flight.state == CallInFlight.ABORTED;
				throw ex;
			}
			finally {
				bounded.close();
			}
		}
		finally {
			flight.ran();
		}
	}

	/** The call's time left, and two ticks more. */
	private long socketTimeoutMillis(CallInFlight flight) {
		return TimeUnit.NANOSECONDS.toMillis(flight.deadline - System.nanoTime() + 2 * this.tickNanos);
	}

	/**
	 * Runs {@code work} in the background, bounded as any call, for clean-up nobody waits
	 * for; a try that fails is made again after a pause (50 ms, doubling up to half a
	 * second), until one succeeds or {@code untilNanos} ({@link System#nanoTime()})
	 * passes: an undo must outlast a database restart, not give up at its first refused
	 * connection.
	 */
	void backgroundUntil(String what, Work<?> work, long untilNanos) {
		tryInBackground(what, work, untilNanos, FIRST_RETRY_NANOS);
	}

	private void tryInBackground(String what, Work<?> work, long untilNanos, long pauseNanos) {
		try {
			this.background.execute(() -> {
				try {
					callOnThisThread("", what, work, null, System.nanoTime() + this.timeout.toNanos());
				}
				catch (RuntimeException ex) {
					if (System.nanoTime() + pauseNanos - untilNanos >= 0) {
						logger.debug("Could not " + what + "; gave up", ex);
						return;
					}
					long next = Math.min(MAX_RETRY_NANOS, 2 * pauseNanos);
					try {
						this.scheduler.schedule(() -> tryInBackground(what, work, untilNanos, next), pauseNanos,
								TimeUnit.NANOSECONDS);
					}
					catch (RejectedExecutionException closed) {
						logger.debug("Could not " + what + "; the provider is closed", ex);
					}
				}
			});
		}
		catch (RejectedExecutionException ex) {
			logger.debug("Could not " + what, ex);
		}
	}

	/** The watchdog's tick: acts on every call whose deadline is within a tick. */
	private void watch() {
		long now = System.nanoTime();
		for (CallInFlight flight : this.inFlight) {
			if (now - (flight.deadline - this.tickNanos) >= 0) {
				flight.expire();
			}
		}
	}

	@Override
	public void close() {
		this.workers.shutdown();
		this.background.shutdown();
		this.scheduler.shutdownNow();
	}

	/** Statements on one borrowed connection. */
	@FunctionalInterface
	interface Work<T> {

		T run(Connection connection) throws SQLException;

	}

	/** A duration as the statements take it: whole microseconds, at least one. */
	static long micros(Duration duration) {
		return Math.max(1, TimeUnit.NANOSECONDS.toMicros(duration.toNanos()));
	}

}
