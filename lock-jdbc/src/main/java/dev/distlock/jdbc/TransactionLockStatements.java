package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import dev.distlock.jdbc.dialect.JdbcLockDialect;

/**
 * The SQL of transaction locks for one database: take the lock of a key in the caller's
 * transaction within a wait time, and raise the key's fence there for the holder's token.
 * A lock taken is held until that transaction ends; nothing here ever releases it.
 *
 * <p>
 * Each key's fence lives in a table of its own ({@code distributed_lock_tx}: key and
 * fence), raised in the holder's transaction to {@code max(fence + 1, database clock in
 * microseconds)}. A holder whose transaction rolls back leaves the fence where it was;
 * the clock floor still puts the next token above its token.
 */
abstract sealed class TransactionLockStatements
		permits PostgresTransactionLockStatements, MySqlTransactionLockStatements {

	final String table;

	/** The bound of a statement that does not wait for a lock, in whole seconds. */
	final int timeoutSeconds;

	TransactionLockStatements(String table, int timeoutSeconds) {
		this.table = table;
		this.timeoutSeconds = timeoutSeconds;
	}

	/**
	 * A connection's network timeout while a lock is asked for with {@code waitTime}:
	 * past the statements' own guards, which end a wait that outlives its lock timeout,
	 * and any statement that does not wait.
	 */
	long networkTimeoutMillis(Duration waitTime) {
		return waitTime.toMillis() + TimeUnit.SECONDS.toMillis(2 * (this.timeoutSeconds + 1L));
	}

	static TransactionLockStatements of(JdbcLockDialect dialect, String table, int timeoutSeconds,
			javax.sql.DataSource dataSource) {
		if (dialect == JdbcLockDialect.POSTGRESQL) {
			return new PostgresTransactionLockStatements(table, timeoutSeconds);
		}
		return new MySqlTransactionLockStatements(table, timeoutSeconds, dataSource);
	}

	/**
	 * Takes the lock on {@code key} in the transaction of {@code connection}, waiting up
	 * to {@code waitTime} for another transaction that holds it.
	 * @return the new fencing token, or empty if the lock was still held by another
	 * transaction when the wait time was over; the transaction is usable either way
	 * @throws InterruptedException if the thread was interrupted while waiting
	 */
	abstract OptionalLong lock(Connection connection, String key, Duration waitTime)
			throws SQLException, InterruptedException;

	/** The DDL of the table, under the name {@code table}. */
	static String ddl(JdbcLockDialect dialect, String table) {
		return SchemaResources.read(schemaResource(dialect)).replace(JdbcTransactionLocks.DEFAULT_TABLE_NAME, table);
	}

	/** The class path of the table's DDL for {@code dialect}. */
	static String schemaResource(JdbcLockDialect dialect) {
		return "dev/distlock/jdbc/schema-tx-" + dialect.name() + ".sql";
	}

	/** Runs a query of one row and one number, bounded by the statement timeout. */
	long queryLong(Connection connection, String sql, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setQueryTimeout(this.timeoutSeconds);
			statement.setString(1, key);
			try (ResultSet result = statement.executeQuery()) {
				if (!result.next()) {
					throw new SQLException("No fence row for transaction lock '" + key + "'");
				}
				return result.getLong(1);
			}
		}
	}

	static void execute(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

}
