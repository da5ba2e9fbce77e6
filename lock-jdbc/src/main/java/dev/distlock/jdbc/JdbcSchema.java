package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.distlock.jdbc.dialect.JdbcLockDialect;

/**
 * The lock table and its family's tables: checks that they are there with the columns the
 * store uses, and creates them from the DDL shipped for the database.
 */
final class JdbcSchema {

	private static final List<String> COLUMNS = List.of("name", "owner", "fence", "expires_at", "waited");

	private final JdbcLockProvider provider;

	private final JdbcCalls calls;

	private final String tableName;

	JdbcSchema(JdbcLockProvider provider, JdbcCalls calls) {
		this.provider = provider;
		this.calls = calls;
		this.tableName = provider.tableName();
	}

	/** See {@link JdbcLockProvider#validateSchema()}. */
	void validate() {
		List<String> missing = this.calls.call("", "check the lock table '" + this.tableName + "'",
				this::missingColumns, null);
		if (!missing.isEmpty()) {
			JdbcLockDialect known = this.provider.dialect();
			String what = missing.equals(COLUMNS) ? "the table '" + this.tableName + "' does not exist"
					: "the table '" + this.tableName + "' lacks the column(s) " + String.join(", ", missing);
			throw new IllegalStateException("distlock's JDBC store cannot use " + label(known) + ": " + what
					+ ". Create it with the DDL in lock-jdbc's jar at classpath:" + known.schemaResource()
					+ " (renaming the table if you chose another name), or set"
					+ " distributed-lock.jdbc.initialize-schema=always to have it created at startup.");
		}
		String problem = this.calls.call("", "check the key column of the lock table '" + this.tableName + "'",
				(connection) -> this.provider.dialect(connection).keyColumnProblem(connection, this.tableName), null);
		if (problem != null) {
			throw new IllegalStateException("distlock's JDBC store cannot use the table '" + this.tableName + "' on "
					+ label(this.provider.dialect()) + ": " + problem);
		}
		String familyProblem = this.calls.call("",
				"check the lock family's tables of the lock table '" + this.tableName + "'",
				(connection) -> FamilyTables.missingTable(connection, this.tableName), null);
		if (familyProblem != null) {
			JdbcLockDialect known = this.provider.dialect();
			throw new IllegalStateException("distlock's JDBC store cannot use " + label(known) + ": " + familyProblem
					+ ". Create it with the DDL in lock-jdbc's jar at classpath:" + known.schemaResource()
					+ " (renaming the tables if you chose another name), or set"
					+ " distributed-lock.jdbc.initialize-schema=always to have it created at startup.");
		}
	}

	private List<String> missingColumns(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.executeQuery("SELECT " + String.join(", ", COLUMNS) + " FROM " + this.tableName + " WHERE 1 = 0")
				.close();
			return List.of();
		}
		catch (SQLException ex) {
			// PostgreSQL needs no rollback in autocommit; the statement failed alone.
		}
		Set<String> present = presentColumns(connection.getMetaData(), connection.getCatalog());
		List<String> missing = new ArrayList<>();
		for (String column : COLUMNS) {
			if (!present.contains(column)) {
				missing.add(column);
			}
		}
		return missing.isEmpty() ? COLUMNS : missing;
	}

	/** The lock table's columns, lower case, under any case of its name. */
	private Set<String> presentColumns(DatabaseMetaData metaData, String catalog) throws SQLException {
		Set<String> present = new LinkedHashSet<>();
		String schema = null;
		String table = this.tableName;
		int dot = table.indexOf('.');
		if (dot > 0) {
			schema = table.substring(0, dot);
			table = table.substring(dot + 1);
		}
		for (String name : new String[] { table, table.toLowerCase(Locale.ROOT), table.toUpperCase(Locale.ROOT) }) {
			try (ResultSet columns = metaData.getColumns(catalog, schema, name, null)) {
				while (columns.next()) {
					present.add(columns.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
				}
			}
			if (!present.isEmpty()) {
				break;
			}
		}
		return present;
	}

	/** See {@link JdbcLockProvider#createTableIfMissing()}. */
	void createIfMissing() {
		this.calls.call("", "create the lock table '" + this.tableName + "'", (connection) -> {
			String ddl = SchemaResources.read(this.provider.dialect(connection).schemaResource())
				.replace(JdbcLockProvider.DEFAULT_TABLE_NAME, this.tableName);
			SchemaResources.create(connection, ddl, 0);
			return null;
		}, null);
	}

	/** The database's name in messages. */
	static String label(JdbcLockDialect dialect) {
		return switch (dialect.name()) {
			case "postgresql" -> "PostgreSQL";
			case "mariadb" -> "MariaDB";
			default -> "MySQL";
		};
	}

}
