package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** The published contract suite on a real PostgreSQL server. */
class PostgresContractTests extends AbstractJdbcContractTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

}
