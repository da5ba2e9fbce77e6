package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import javax.sql.DataSource;

import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Release signals over PostgreSQL's {@code LISTEN}/{@code NOTIFY}: one connection per
 * provider, whatever the number of waiters and keys, listening on one channel per table;
 * a release of a row that a waiter marked sends the key as the payload, on commit.
 *
 * <p>
 * The connection is opened at the first wait and given back after a minute with nobody
 * waiting. It comes from the listener's data source: by default the application's pool
 * (then the pool lends one connection for as long as anybody waits), or, when the
 * auto-configuration can derive one, a plain driver connection outside the pool, so
 * waiting never holds a pooled connection. A pool's connection can also serve badly for
 * {@code LISTEN} behind a transaction-pooling proxy (PgBouncer), which loses
 * notifications; a signal is only a hint, and waiters retry at their retry interval
 * whatever happens to it.
 */
final class PostgresReleaseSignals implements ReleaseSignals, AutoCloseable {

	private static final Log logger = LogFactory.getLog(PostgresReleaseSignals.class);

	private static final long IDLE_NANOS = TimeUnit.MINUTES.toNanos(1);

	private static final int POLL_MILLIS = 250;

	private final DataSource dataSource;

	private final String channel;

	private final Map<String, Set<Runnable>> subscribers = new ConcurrentHashMap<>();

	private final ReentrantLock lifecycle = new ReentrantLock();

	private @Nullable Thread listener;

	private volatile boolean listening;

	private volatile boolean closed;

	PostgresReleaseSignals(DataSource dataSource, String channel) {
		this.dataSource = dataSource;
		this.channel = channel;
	}

	@Override
	public Subscription subscribe(String key, Runnable onRelease) {
		this.subscribers.computeIfAbsent(key, (k) -> new CopyOnWriteArraySet<>()).add(onRelease);
		startListener();
		return () -> this.subscribers.computeIfPresent(key, (k, set) -> {
			set.remove(onRelease);
			return set.isEmpty() ? null : set;
		});
	}

	@Override
	public boolean isListening() {
		return this.listening;
	}

	/** Keys that a waiter of this JVM listens for. */
	int subscribedKeys() {
		return this.subscribers.size();
	}

	private void startListener() {
		this.lifecycle.lock();
		try {
			if (this.closed || (this.listener != null && this.listener.isAlive())) {
				return;
			}
			Thread thread = JdbcCalls.daemon(this::listen, "distlock-jdbc-listen");
			this.listener = thread;
			thread.start();
		}
		finally {
			this.lifecycle.unlock();
		}
	}

	private void listen() {
		long idleSince = System.nanoTime();
		long backoffMillis = 100;
		while (!this.closed) {
			try (Connection connection = this.dataSource.getConnection()) {
				connection.setAutoCommit(true);
				PGConnection postgres = connection.unwrap(PGConnection.class);
				try (Statement statement = connection.createStatement()) {
					statement.execute("LISTEN \"" + this.channel + "\"");
				}
				this.listening = true;
				backoffMillis = 100;
				// Releases before LISTEN took effect went unheard: every waiter tries
				// again.
				signalAll();
				while (!this.closed) {
					PGNotification[] notifications = postgres.getNotifications(POLL_MILLIS);
					if (notifications != null) {
						for (PGNotification notification : notifications) {
							signal(notification.getParameter());
						}
					}
					if (!this.subscribers.isEmpty()) {
						idleSince = System.nanoTime();
					}
					else if (System.nanoTime() - idleSince > IDLE_NANOS && stopIfIdle()) {
						return;
					}
				}
			}
			catch (SQLException | RuntimeException ex) {
				this.listening = false;
				if (this.closed) {
					return;
				}
				logger.debug("The release signal connection failed; waiters poll until it is back", ex);
				signalAll();
				try {
					Thread.sleep(backoffMillis);
				}
				catch (InterruptedException interrupted) {
					return;
				}
				backoffMillis = Math.min(5000, backoffMillis * 2);
			}
			finally {
				this.listening = false;
			}
		}
	}

	/**
	 * Ends the listener if nobody subscribed meanwhile; a later subscribe starts another.
	 */
	private boolean stopIfIdle() {
		this.lifecycle.lock();
		try {
			if (!this.subscribers.isEmpty()) {
				return false;
			}
			this.listener = null;
			return true;
		}
		finally {
			this.lifecycle.unlock();
		}
	}

	private void signal(String key) {
		Set<Runnable> waiting = this.subscribers.get(key);
		if (waiting != null) {
			run(List.copyOf(waiting));
		}
	}

	private void signalAll() {
		for (Set<Runnable> waiting : this.subscribers.values()) {
			run(List.copyOf(waiting));
		}
	}

	private static void run(List<Runnable> callbacks) {
		for (Runnable callback : callbacks) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				logger.warn("Release signal subscriber failed", ex);
			}
		}
	}

	@Override
	public void close() {
		Thread thread;
		this.lifecycle.lock();
		try {
			this.closed = true;
			thread = this.listener;
			this.listener = null;
		}
		finally {
			this.lifecycle.unlock();
		}
		if (thread != null) {
			thread.interrupt();
		}
	}

}
