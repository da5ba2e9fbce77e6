package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** The JDBC semaphores' and latches' own guarantees on a real MariaDB server. */
class MariaDbSemaphoreLatchTests extends AbstractJdbcSemaphoreLatchTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

}
