package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** The published contract suite on a real MariaDB server. */
class MariaDbContractTests extends AbstractJdbcContractTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

}
