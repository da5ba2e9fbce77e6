package dev.distlock.autoconfigure.jdbc;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Settings of the JDBC store, under {@code distributed-lock.jdbc}.
 */
@ConfigurationProperties("distributed-lock.jdbc")
public class DistributedLockJdbcProperties {

	/**
	 * The lock table: an SQL identifier, optionally qualified by a schema
	 * ("schema.table"). It must exist with the columns of the DDL shipped in lock-jdbc's
	 * jar (classpath:dev/distlock/jdbc/schema-<database>.sql), or be created at startup
	 * (initialize-schema).
	 */
	private String tableName = "distributed_lock";

	/**
	 * When to create the lock table and the tables of read-write locks at startup, if
	 * missing, with the DDL shipped for the database: embedded (only for an embedded
	 * database, so never for PostgreSQL, MariaDB or MySQL), always, or never. The tables
	 * are checked at startup either way.
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

	/**
	 * How long a row stays after its lease ran out before a background sweep deletes it.
	 * A key swept and taken again starts its fencing token at the database's clock in
	 * microseconds, above every token it had, as long as that clock never steps back by
	 * more than this.
	 */
	private Duration sweepAfter = Duration.ofDays(1);

	/**
	 * Whether the PostgreSQL release listener (LISTEN/NOTIFY, one connection per
	 * application) opens its own driver connection, derived from the DataSource's URL and
	 * credentials, instead of borrowing one from the pool for as long as anybody waits.
	 * Falls back to the pool when the DataSource's settings cannot be read.
	 */
	private boolean listenerOutsidePool = true;

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

	public Duration getSweepAfter() {
		return this.sweepAfter;
	}

	public void setSweepAfter(Duration sweepAfter) {
		this.sweepAfter = sweepAfter;
	}

	public boolean isListenerOutsidePool() {
		return this.listenerOutsidePool;
	}

	public void setListenerOutsidePool(boolean listenerOutsidePool) {
		this.listenerOutsidePool = listenerOutsidePool;
	}

}
