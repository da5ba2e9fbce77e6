package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** Locks held by the caller's transaction on MariaDB: row locks on the key's row. */
class MariaDbTransactionLockTests extends AbstractJdbcTransactionLockTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	String waitingSql() {
		return "SELECT count(*) FROM information_schema.INNODB_LOCK_WAITS";
	}

	@Override
	String lockWaitSettingSql() {
		return "SELECT CAST(@@SESSION.innodb_lock_wait_timeout AS CHAR)";
	}

}
