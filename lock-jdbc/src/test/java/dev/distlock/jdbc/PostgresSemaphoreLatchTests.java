package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** The JDBC semaphores' and latches' own guarantees on a real PostgreSQL server. */
class PostgresSemaphoreLatchTests extends AbstractJdbcSemaphoreLatchTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

}
