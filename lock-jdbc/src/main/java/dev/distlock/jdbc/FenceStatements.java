package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import dev.distlock.jdbc.dialect.JdbcLockDialect;

/**
 * The SQL of the fence table for one database: raise a resource's token to the one
 * offered unless it is higher, locking the resource's row until the transaction ends, and
 * tell the token the row holds afterwards.
 *
 * <p>
 * PostgreSQL does it in one statement: {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE
 * token <= offered RETURNING token}, which returns no row when the stored token is higher
 * (the highest is then read for the message). MariaDB and MySQL have no {@code RETURNING}
 * on an upsert: {@code INSERT ... ON DUPLICATE KEY UPDATE token =
 * GREATEST(token, offered)} locks the row exclusively, and a locking read
 * ({@code SELECT ... FOR UPDATE}, which sees the latest committed row whatever the
 * isolation level) tells the token it holds.
 */
final class FenceStatements {

	private final boolean postgres;

	private final String raise;

	private final String read;

	FenceStatements(JdbcLockDialect dialect, String table) {
		this.postgres = dialect == JdbcLockDialect.POSTGRESQL;
		if (this.postgres) {
			this.raise = "INSERT INTO " + table + " AS f (resource, token) VALUES (?, ?) ON CONFLICT (resource)"
					+ " DO UPDATE SET token = EXCLUDED.token WHERE f.token <= EXCLUDED.token RETURNING f.token";
			this.read = "SELECT token FROM " + table + " WHERE resource = ?";
		}
		else {
			this.raise = "INSERT INTO " + table + " (resource, token) VALUES (?, ?)"
					+ " ON DUPLICATE KEY UPDATE token = GREATEST(token, ?)";
			this.read = "SELECT token FROM " + table + " WHERE resource = ? FOR UPDATE";
		}
	}

	/**
	 * Raises the token of {@code resource} to {@code token} unless it holds a higher one,
	 * and returns the token it holds now: {@code token} when accepted, the higher one
	 * when not. The row stays locked until the connection's transaction ends.
	 */
	long raise(Connection connection, String resource, long token, int timeoutSeconds) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(this.raise)) {
			statement.setQueryTimeout(timeoutSeconds);
			statement.setString(1, resource);
			statement.setLong(2, token);
			if (this.postgres) {
				try (ResultSet result = statement.executeQuery()) {
					if (result.next()) {
						return result.getLong(1);
					}
				}
			}
			else {
				statement.setLong(3, token);
				statement.executeUpdate();
			}
		}
		try (PreparedStatement statement = connection.prepareStatement(this.read)) {
			statement.setQueryTimeout(timeoutSeconds);
			statement.setString(1, resource);
			try (ResultSet result = statement.executeQuery()) {
				if (!result.next()) {
					throw new SQLException("The fence row of '" + resource + "' vanished within its transaction");
				}
				return result.getLong(1);
			}
		}
	}

	/** The DDL of the fence table, under the name {@code table}. */
	static String ddl(JdbcLockDialect dialect, String table) {
		return SchemaResources.read(schemaResource(dialect)).replace(JdbcFence.DEFAULT_TABLE_NAME, table);
	}

	/** The class path of the fence table's DDL for {@code dialect}. */
	static String schemaResource(JdbcLockDialect dialect) {
		return "dev/distlock/jdbc/schema-fence-" + dialect.name() + ".sql";
	}

}
