package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * MariaDB and MySQL 8: an exclusive row lock on the key's row ({@code SELECT ... FOR
 * UPDATE}) in the caller's transaction, which InnoDB holds until the transaction ends.
 *
 * <p>
 * A key's row is inserted, if missing, on a connection of its own in autocommit, never in
 * the caller's transaction: a locking read of a missing row would take a gap lock, and
 * two callers inserting into one gap would deadlock, which rolls back a whole
 * transaction. Rows are never deleted, so this costs one short statement per key, once
 * per JVM.
 *
 * <p>
 * Waiting: a free lock costs one {@code SELECT ... FOR UPDATE NOWAIT}; a busy one is
 * waited for in InnoDB's lock queue with {@code innodb_lock_wait_timeout} set for the
 * session to the whole seconds left of the wait time and set back right after, and the
 * rest of the wait, under a second, is polled with {@code NOWAIT}. A lock wait timeout
 * rolls back only the statement ({@code innodb_rollback_on_timeout} is off by default),
 * so the transaction stays usable. Then one {@code UPDATE} raises the fence, computed
 * from the fence and the database clock read by the locking {@code SELECT}.
 */
final class MySqlTransactionLockStatements extends TransactionLockStatements {

	private static final String NOW_MICROS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";

	/** ER_LOCK_WAIT_TIMEOUT, also MariaDB's answer to NOWAIT. */
	private static final int LOCK_WAIT_TIMEOUT = 1205;

	/** MySQL's ER_LOCK_NOWAIT. */
	private static final int LOCK_NOWAIT = 3572;

	/** MariaDB's ER_STATEMENT_TIMEOUT: a query timeout ran out. */
	private static final int STATEMENT_TIMEOUT = 1969;

	private static final int KNOWN_ROWS = 10_000;

	private static final long MAX_POLL_MILLIS = 50;

	/**
	 * Borrow connections for the rows of new keys, so that the caller can stop waiting.
	 */
	private static final ExecutorService BORROWERS = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "distlock-transaction-lock-row");
		thread.setDaemon(true);
		return thread;
	});

	private final DataSource dataSource;

	private final String select;

	private final String selectNowait;

	private final String raise;

	private final String exists;

	private final String insert;

	/** Keys whose row this JVM has seen: no need to look for it again. */
	private final Set<String> knownRows = ConcurrentHashMap.newKeySet();

	MySqlTransactionLockStatements(String table, int timeoutSeconds, DataSource dataSource) {
		super(table, timeoutSeconds);
		this.dataSource = dataSource;
		this.select = "SELECT fence, " + NOW_MICROS + " FROM " + table + " WHERE name = ? FOR UPDATE";
		this.selectNowait = this.select + " NOWAIT";
		this.raise = "UPDATE " + table + " SET fence = ? WHERE name = ?";
		this.exists = "SELECT 1 FROM " + table + " WHERE name = ?";
		this.insert = "INSERT IGNORE INTO " + table + " (name, fence) VALUES (?, " + NOW_MICROS + ")";
	}

	@Override
	OptionalLong lock(Connection connection, String key, Duration waitTime) throws SQLException, InterruptedException {
		if (!this.knownRows.contains(key)) {
			insertRow(key);
		}
		long deadline = System.nanoTime() + waitTime.toNanos();
		boolean inserted = false;
		boolean first = true;
		while (true) {
			long wholeSeconds = TimeUnit.NANOSECONDS.toSeconds(deadline - System.nanoTime());
			// A free lock costs one statement; a busy one is queued for while whole
			// seconds of the wait are left.
			boolean queue = !first && wholeSeconds >= 1;
			first = false;
			Row row = queue ? lockWaiting(connection, key, wholeSeconds) : lockNowait(connection, key);
			if (row == Row.MISSING) {
				// Deleted by hand since this JVM saw it: insert it once more.
				this.knownRows.remove(key);
				if (inserted) {
					throw new SQLException("The row of transaction lock '" + key + "' vanished from " + this.table);
				}
				insertRow(key);
				inserted = true;
				continue;
			}
			if (row != null) {
				long token = Math.max(row.fence() + 1, row.clock());
				try (PreparedStatement statement = connection.prepareStatement(this.raise)) {
					statement.setQueryTimeout(this.timeoutSeconds);
					statement.setLong(1, token);
					statement.setString(2, key);
					statement.executeUpdate();
				}
				return OptionalLong.of(token);
			}
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return OptionalLong.empty();
			}
			if (!queue && wholeSeconds < 1) {
				long pollMillis = Math.min(TimeUnit.NANOSECONDS.toMillis(remaining),
						ThreadLocalRandom.current().nextLong(MAX_POLL_MILLIS / 5, MAX_POLL_MILLIS + 1));
				Thread.sleep(Math.max(1, pollMillis));
			}
		}
	}

	/** The locked row, {@link Row#MISSING}, or null if another transaction holds it. */
	private @Nullable Row lockNowait(Connection connection, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(this.selectNowait)) {
			statement.setQueryTimeout(this.timeoutSeconds);
			return read(statement, key);
		}
		catch (SQLException ex) {
			if (isLockTimeout(ex)) {
				return null;
			}
			throw ex;
		}
	}

	/**
	 * Waits for the row lock up to {@code seconds}, with the session's lock wait timeout
	 * set for this one statement and set back whatever happens.
	 */
	private @Nullable Row lockWaiting(Connection connection, String key, long seconds) throws SQLException {
		execute(connection, "SET @distlock_lock_wait = @@SESSION.innodb_lock_wait_timeout,"
				+ " SESSION innodb_lock_wait_timeout = " + seconds);
		try (PreparedStatement statement = connection.prepareStatement(this.select)) {
			// Only a guard: the lock wait timeout ends the wait first.
			statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, seconds + 1 + this.timeoutSeconds));
			return read(statement, key);
		}
		catch (SQLException ex) {
			if (isLockTimeout(ex)) {
				return null;
			}
			throw ex;
		}
		finally {
			execute(connection, "SET SESSION innodb_lock_wait_timeout = @distlock_lock_wait");
		}
	}

	private static Row read(PreparedStatement statement, String key) throws SQLException {
		statement.setString(1, key);
		try (ResultSet result = statement.executeQuery()) {
			return result.next() ? new Row(result.getLong(1), result.getLong(2)) : Row.MISSING;
		}
	}

	private static boolean isLockTimeout(SQLException ex) {
		return ex.getErrorCode() == LOCK_WAIT_TIMEOUT || ex.getErrorCode() == LOCK_NOWAIT;
	}

	/**
	 * Inserts the key's row if missing, on a connection of its own in autocommit. A plain
	 * read first: an insert that finds the row locked by a holder would wait for the
	 * holder's transaction.
	 */
	private void insertRow(String key) throws SQLException, InterruptedException {
		try (Connection own = borrow(key);
				NetworkTimeout bounded = NetworkTimeout.set(own, networkTimeoutMillis(Duration.ZERO))) {
			if (!own.getAutoCommit()) {
				own.setAutoCommit(true);
			}
			boolean found;
			try (PreparedStatement statement = own.prepareStatement(this.exists)) {
				statement.setQueryTimeout(this.timeoutSeconds);
				statement.setString(1, key);
				try (ResultSet result = statement.executeQuery()) {
					found = result.next();
				}
			}
			if (!found) {
				try (PreparedStatement statement = own.prepareStatement(this.insert)) {
					statement.setQueryTimeout(this.timeoutSeconds);
					statement.setString(1, key);
					statement.executeUpdate();
				}
				catch (SQLException ex) {
					// Inserted and locked by another caller just now: the row is there.
					if (!isLockTimeout(ex) && !(ex instanceof SQLTimeoutException)
							&& ex.getErrorCode() != STATEMENT_TIMEOUT) {
						throw ex;
					}
				}
			}
		}
		if (this.knownRows.size() >= KNOWN_ROWS) {
			this.knownRows.clear();
		}
		this.knownRows.add(key);
	}

	/**
	 * A connection of the pool within the store timeout: a pool with none free (each one
	 * in a transaction, the caller's among them) or a server that does not answer would
	 * hold the caller for the pool's own timeout. A connection that comes later goes back
	 * to the pool.
	 */
	private Connection borrow(String key) throws SQLException, InterruptedException {
		CompletableFuture<Connection> borrowed = CompletableFuture.supplyAsync(() -> {
			try {
				return this.dataSource.getConnection();
			}
			catch (SQLException ex) {
				throw new CompletionException(ex);
			}
		}, BORROWERS);
		try {
			return borrowed.get(this.timeoutSeconds, TimeUnit.SECONDS);
		}
		catch (TimeoutException ex) {
			borrowed.thenAccept(MySqlTransactionLockStatements::giveBack);
			throw new SQLTimeoutException("No connection of the pool came within " + this.timeoutSeconds
					+ "s to create the row of transaction lock '" + key + "' in " + this.table + ". On MariaDB and"
					+ " MySQL, the first lock on a key in a JVM borrows a second connection for a moment, outside"
					+ " the caller's transaction: size the pool for it");
		}
		catch (InterruptedException ex) {
			borrowed.thenAccept(MySqlTransactionLockStatements::giveBack);
			throw ex;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof SQLException failure) {
				throw failure;
			}
			throw new SQLException("Could not borrow a connection to create the row of transaction lock '" + key + "': "
					+ ex.getCause(), ex.getCause());
		}
	}

	private static void giveBack(Connection late) {
		try {
			late.close();
		}
		catch (SQLException ex) {
			// A broken connection, which the pool drops anyway.
		}
	}

	/** The key's fence and the database clock, as the locking read found them. */
	private record Row(long fence, long clock) {

		static final Row MISSING = new Row(-1, -1);

	}

}
