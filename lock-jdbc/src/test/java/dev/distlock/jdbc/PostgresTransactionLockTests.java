package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** Locks held by the caller's transaction on PostgreSQL: advisory transaction locks. */
class PostgresTransactionLockTests extends AbstractJdbcTransactionLockTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

	@Override
	String waitingSql() {
		return "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted";
	}

	@Override
	String lockWaitSettingSql() {
		return "SELECT current_setting('lock_timeout')";
	}

}
