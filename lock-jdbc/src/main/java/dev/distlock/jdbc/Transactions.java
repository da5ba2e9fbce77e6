package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import org.jspecify.annotations.Nullable;

/**
 * Several statements as one transaction on a connection {@link JdbcCalls} lent in
 * autocommit, and the small helpers of the semaphore and latch statements. The connection
 * goes back in autocommit, whatever happened: a transaction left open would hold its row
 * locks in the pool.
 */
final class Transactions {

	private Transactions() {
	}

	/**
	 * Runs {@code work} in one transaction: committed if it returns, rolled back if it
	 * throws. {@code work} may roll back itself and return (an answer that changes
	 * nothing); the commit then commits nothing.
	 */
	static <T> T run(Connection connection, JdbcCalls.Work<T> work) throws SQLException {
		connection.setAutoCommit(false);
		boolean done = false;
		try {
			T result = work.run(connection);
			// Turning autocommit back on commits: one round trip, not two.
			connection.setAutoCommit(true);
			done = true;
			return result;
		}
		finally {
			if (!done) {
				rollbackQuietly(connection);
			}
		}
	}

	/**
	 * After a failure, whose exception is the one to throw: a broken connection's
	 * transaction ends with it on the server, and the pool resets autocommit.
	 */
	private static void rollbackQuietly(Connection connection) {
		try {
			connection.rollback();
			connection.setAutoCommit(true);
		}
		catch (SQLException ex) {
			// The connection is broken: the server ends the transaction with it.
		}
	}

	/** Runs {@code sql} with {@code parameters} (strings, longs, integers, booleans). */
	static int update(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			return statement.executeUpdate();
		}
	}

	/**
	 * Runs the update {@code sql}, which sets a value through MariaDB's and MySQL's
	 * {@code LAST_INSERT_ID(expr)}, and returns that value (0 if none).
	 */
	static long updateReturningId(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS)) {
			bind(statement, parameters);
			statement.executeUpdate();
			try (ResultSet keys = statement.getGeneratedKeys()) {
				return keys.next() ? keys.getLong(1) : 0;
			}
		}
	}

	/** The first column of the first row of the query {@code sql}, or null for none. */
	static @Nullable Long queryLong(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			try (ResultSet result = statement.executeQuery()) {
				return result.next() ? result.getLong(1) : null;
			}
		}
	}

	static void bind(PreparedStatement statement, Object... parameters) throws SQLException {
		for (int i = 0; i < parameters.length; i++) {
			Object parameter = parameters[i];
			if (parameter instanceof Long number) {
				statement.setLong(i + 1, number);
			}
			else if (parameter instanceof Integer number) {
				statement.setInt(i + 1, number);
			}
			else if (parameter instanceof Boolean flag) {
				statement.setBoolean(i + 1, flag);
			}
			else {
				statement.setString(i + 1, (String) parameter);
			}
		}
	}

}
