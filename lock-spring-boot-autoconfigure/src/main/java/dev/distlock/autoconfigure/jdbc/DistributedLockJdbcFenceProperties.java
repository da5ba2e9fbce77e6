package dev.distlock.autoconfigure.jdbc;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Settings of the JDBC fence (fenced writes to the application's database), under
 * {@code distributed-lock.fence.jdbc}.
 */
@ConfigurationProperties("distributed-lock.fence.jdbc")
public class DistributedLockJdbcFenceProperties {

	/**
	 * The fence table, which keeps the highest fencing token each fenced resource has
	 * accepted: an SQL identifier, optionally qualified by a schema ("schema.table"). It
	 * must exist with the columns of the DDL shipped in lock-jdbc's jar
	 * (classpath:dev/distlock/jdbc/schema-fence-<database>.sql), or be created at startup
	 * (initialize-schema).
	 */
	private String tableName = "distributed_lock_fence";

	/**
	 * When to create the fence table at startup, if missing, with the DDL shipped for the
	 * database: embedded (only for an embedded database, so never for PostgreSQL, MariaDB
	 * or MySQL), always, or never. The table is not checked at startup: a missing one
	 * fails the first fenced write, with a message naming the DDL.
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

}
