package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import dev.distlock.jdbc.dialect.JdbcLockDialect;
import org.jspecify.annotations.Nullable;

/**
 * The SQL pieces that read-write and multi-key locks share, for one database and lock
 * table: the database's clock, leases on it, and the names of the tables read-write locks
 * add, named after the lock table TABLE ({@code TABLE_reader}: one row per read hold;
 * {@code TABLE_intent}: one row per waiting writer's intent). Time is always the
 * database's, as in the dialects.
 *
 * <p>
 * Statements that must see each other's effects run in one transaction at
 * {@code READ COMMITTED} (see {@link #inTransaction}): each statement then reads what was
 * committed when it started, so a statement after the one that locked the lock row sees
 * every change made by whoever held that row before.
 */
final class FamilySql {

	/**
	 * The owner of a lock row while readers hold the key: never an acquisition's owner
	 * ({@code <uuid>:<sequence>}), so a plain acquire finds the row busy until the
	 * readers' latest lease has run out.
	 */
	static final String READERS = "#readers";

	final boolean postgres;

	/** Whether the database is MariaDB (not MySQL, which has no compound statements). */
	final boolean mariadb;

	/** The lock table. */
	final String table;

	/** The read holds' table. */
	final String readers;

	/** The waiting writers' intents' table. */
	final String intents;

	/** The database's clock as a timestamp. */
	final String now;

	/** The database's clock in microseconds since the epoch. */
	final String nowMicros;

	/** The release channel on PostgreSQL; null where waiters poll. */
	final @Nullable String channel;

	FamilySql(JdbcLockDialect dialect, String table) {
		this.postgres = dialect.name().equals("postgresql");
		this.mariadb = dialect.name().equals("mariadb");
		this.table = table;
		this.readers = table + "_reader";
		this.intents = table + "_intent";
		this.now = this.postgres ? "clock_timestamp()" : "UTC_TIMESTAMP(6)";
		this.nowMicros = this.postgres ? "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
				: "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))";
		this.channel = dialect.releaseChannel(table);
	}

	/**
	 * The database's clock plus the microseconds of the SQL expression {@code micros}.
	 */
	String after(String micros) {
		return this.postgres ? "(clock_timestamp() + " + micros + " * interval '1 microsecond')"
				: "TIMESTAMPADD(MICROSECOND, " + micros + ", UTC_TIMESTAMP(6))";
	}

	/** Microseconds from the database's clock until the timestamp {@code column}. */
	String microsUntil(String column) {
		return this.postgres ? "(extract(epoch FROM " + column + " - clock_timestamp()) * 1000000)::bigint"
				: "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), " + column + ")";
	}

	/**
	 * Runs {@code work} in one transaction at {@code READ COMMITTED} on
	 * {@code connection}, committed if it returns and rolled back if it throws; the
	 * connection is back in autocommit afterwards. PostgreSQL's default level is it
	 * already; MariaDB's and MySQL's is set for this transaction only.
	 */
	<T> T inTransaction(Connection connection, JdbcCalls.Work<T> work) throws SQLException {
		readCommitted(connection);
		connection.setAutoCommit(false);
		boolean committed = false;
		try {
			T result = work.run(connection);
			// Turning autocommit back on commits: one round trip, not two.
			connection.setAutoCommit(true);
			committed = true;
			return result;
		}
		finally {
			if (!committed) {
				try {
					rollbackQuietly(connection);
				}
				finally {
					connection.setAutoCommit(true);
				}
			}
		}
	}

	private static void rollbackQuietly(Connection connection) {
		try {
			connection.rollback();
		}
		catch (SQLException ex) {
			// The connection broke; its transaction ends with it.
		}
	}

	/**
	 * Creates free rows for those of {@code keys} (sorted) that have none, in one
	 * statement of its own transaction, which waits for no row but a new key's concurrent
	 * creator: a transaction that creates a row while it holds others' rows locked could
	 * deadlock with callers whose creation of the same key it waits for. A created row's
	 * fence is the database's clock, as for a key's first acquisition.
	 */
	void createRows(Connection connection, List<String> keys) throws SQLException {
		StringBuilder values = new StringBuilder();
		for (int i = 0; i < keys.size(); i++) {
			values.append((i == 0) ? "" : ", ")
				.append("(?, NULL, ")
				.append(this.nowMicros)
				.append(", ")
				.append(this.now)
				.append(", FALSE)");
		}
		String insert = " INTO " + this.table + " (name, owner, fence, expires_at, waited) VALUES " + values;
		update(connection,
				this.postgres ? "INSERT" + insert + " ON CONFLICT (name) DO NOTHING" : "INSERT IGNORE" + insert,
				keys.toArray());
		if (!connection.getAutoCommit()) {
			connection.commit();
			readCommitted(connection);
		}
	}

	/** The next transaction's level, on MariaDB and MySQL (PostgreSQL's default). */
	private void readCommitted(Connection connection) throws SQLException {
		if (!this.postgres) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
			}
		}
	}

	/**
	 * Runs {@code sql} with {@code parameters} (strings, longs, booleans) and counts its
	 * rows.
	 */
	static int update(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			return statement.executeUpdate();
		}
	}

	/**
	 * Runs the query {@code sql} and returns the long in the first column of its first
	 * row; null when it has none, or the value is SQL NULL.
	 */
	static @Nullable Long queryLong(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			try (ResultSet result = statement.executeQuery()) {
				if (!result.next()) {
					return null;
				}
				long value = result.getLong(1);
				return result.wasNull() ? null : value;
			}
		}
	}

	static void bind(PreparedStatement statement, Object... parameters) throws SQLException {
		bindFrom(statement, 1, parameters);
	}

	/**
	 * Binds {@code parameters} from the 1-based index {@code first} on.
	 * @return the index after the last one bound
	 */
	static int bindFrom(PreparedStatement statement, int first, Object... parameters) throws SQLException {
		for (int i = 0; i < parameters.length; i++) {
			Object parameter = parameters[i];
			int index = first + i;
			if (parameter instanceof Long number) {
				statement.setLong(index, number);
			}
			else if (parameter instanceof Boolean flag) {
				statement.setBoolean(index, flag);
			}
			else {
				statement.setString(index, (String) parameter);
			}
		}
		return first + parameters.length;
	}

}
