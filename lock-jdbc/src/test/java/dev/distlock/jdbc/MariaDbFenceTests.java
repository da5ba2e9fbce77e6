package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** {@link JdbcFence} on a real MariaDB server. */
class MariaDbFenceTests extends AbstractJdbcFenceTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	String lockWaitsSql() {
		// A fence statement of another connection still running on the server: the fence
		// row is locked by the older writer. InnoDB does not always list the waiting
		// transaction in INNODB_TRX as a lock wait, so the statement itself is looked
		// for.
		return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID()"
				+ " AND command = 'Query' AND info LIKE '%INTO fence_test_fence %'";
	}

}
