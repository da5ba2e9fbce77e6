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
		return "SELECT count(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'";
	}

}
