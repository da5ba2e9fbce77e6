package dev.distlock.jdbc;

import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;

/** The JDBC read-write and multi-key locks' own guarantees on a real MariaDB server. */
class MariaDbFamilyTests extends AbstractJdbcFamilyTests {

	@Override
	Supplier<HikariDataSource> dataSources() {
		return TestDatabases::mariadb;
	}

	/**
	 * The update of the keys that had rows, after the insert of the one that had none.
	 */
	@Override
	String multiKeyWrite() {
		return "UPDATE family_lock SET owner = CASE";
	}

}
