package dev.distlock.jdbc;

import dev.distlock.jdbc.dialect.JdbcLockDialect;

/**
 * The database's clock in the SQL of the semaphore and latch tables, as the lock table's
 * statements read it: PostgreSQL's {@code clock_timestamp()} (not {@code now()}, the
 * start of the transaction), MariaDB's and MySQL's {@code UTC_TIMESTAMP(6)} (no session
 * time zone takes part). Never the JVM's clock.
 */
final class SqlClock {

	private static final SqlClock POSTGRES = new SqlClock(true, "clock_timestamp()",
			"(extract(epoch FROM clock_timestamp()) * 1000000)::bigint");

	private static final SqlClock MYSQL = new SqlClock(false, "UTC_TIMESTAMP(6)",
			"TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))");

	/** Whether the database is PostgreSQL (else MariaDB or MySQL). */
	final boolean postgres;

	/** The current time. */
	final String now;

	/** The current time in microseconds since the epoch. */
	final String nowMicros;

	private SqlClock(boolean postgres, String now, String nowMicros) {
		this.postgres = postgres;
		this.now = now;
		this.nowMicros = nowMicros;
	}

	static SqlClock of(JdbcLockDialect dialect) {
		return (dialect == JdbcLockDialect.POSTGRESQL) ? POSTGRES : MYSQL;
	}

	/** The current time plus a parameter's microseconds. */
	String plusMicros() {
		return this.postgres ? "clock_timestamp() + ? * interval '1 microsecond'"
				: "TIMESTAMPADD(MICROSECOND, ?, UTC_TIMESTAMP(6))";
	}

	/** The current time less a parameter's microseconds. */
	String minusMicros() {
		return this.postgres ? "clock_timestamp() - ? * interval '1 microsecond'"
				: "TIMESTAMPADD(MICROSECOND, -?, UTC_TIMESTAMP(6))";
	}

	/** The microseconds from now until the time in {@code column}. */
	String microsUntil(String column) {
		return this.postgres ? "(extract(epoch FROM " + column + " - clock_timestamp()) * 1000000)::bigint"
				: "TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), " + column + ")";
	}

	/**
	 * Inserts a row unless one with its key exists: {@code INSERT ... ON CONFLICT DO
	 * NOTHING}, or {@code INSERT IGNORE}.
	 */
	String insertIfAbsent(String table, String columns, String values) {
		return this.postgres
				? "INSERT INTO " + table + " (" + columns + ") VALUES (" + values + ") ON CONFLICT DO NOTHING"
				: "INSERT IGNORE INTO " + table + " (" + columns + ") VALUES (" + values + ")";
	}

}
