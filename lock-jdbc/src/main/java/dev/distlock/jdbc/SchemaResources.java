package dev.distlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;

/**
 * The DDL files shipped in lock-jdbc's jar, read as the stores run them: comment lines
 * left out, the last statement's semicolon dropped.
 */
final class SchemaResources {

	/**
	 * What PostgreSQL answers a {@code CREATE ... IF NOT EXISTS} that lost a race with
	 * another session creating the same table: a unique violation in the catalog, or the
	 * relation or object already there.
	 */
	private static final Set<String> LOST_CREATE_RACE = Set.of("23505", "42P07", "42710");

	/** Attempts per statement: the first, and one after each race lost. */
	private static final int ATTEMPTS = 3;

	private SchemaResources() {
	}

	/** The DDL at {@code resource} on lock-jdbc's class path. */
	static String read(String resource) {
		try (InputStream in = SchemaResources.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Missing " + resource + " in lock-jdbc's jar");
			}
			StringBuilder sql = new StringBuilder();
			for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
				if (!line.startsWith("--")) {
					sql.append(line).append('\n');
				}
			}
			String statement = sql.toString().trim();
			return statement.endsWith(";") ? statement.substring(0, statement.length() - 1) : statement;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read " + resource, ex);
		}
	}

	/**
	 * Runs {@code ddl}'s statements one by one, each in a transaction of its own.
	 * <p>
	 * Instances that start together may all find a table missing. PostgreSQL's
	 * {@code IF NOT EXISTS} does not cover that race: the later session's statement waits
	 * for the earlier one's commit and then fails on the catalog. Run again, it finds the
	 * table, so a statement that lost the race runs again.
	 * @param timeoutSeconds the timeout of each statement, or 0 for the driver's
	 */
	static void create(Connection connection, String ddl, int timeoutSeconds) throws SQLException {
		boolean autoCommit = connection.getAutoCommit();
		if (!autoCommit) {
			// A failed statement would abort the statements before it in one transaction.
			connection.setAutoCommit(true);
		}
		try {
			// One statement per call: MariaDB's driver runs one statement per call.
			for (String sql : ddl.split(";\\s*\\n")) {
				createOne(connection, sql, timeoutSeconds);
			}
		}
		finally {
			if (!autoCommit) {
				connection.setAutoCommit(false);
			}
		}
	}

	private static void createOne(Connection connection, String sql, int timeoutSeconds) throws SQLException {
		for (int attempt = 1;; attempt++) {
			try (Statement statement = connection.createStatement()) {
				if (timeoutSeconds > 0) {
					statement.setQueryTimeout(timeoutSeconds);
				}
				statement.execute(sql);
				return;
			}
			catch (SQLException ex) {
				if (attempt == ATTEMPTS || !LOST_CREATE_RACE.contains(ex.getSQLState())) {
					throw ex;
				}
			}
		}
	}

}
