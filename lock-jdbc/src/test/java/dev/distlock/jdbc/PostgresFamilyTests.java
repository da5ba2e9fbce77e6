package dev.distlock.jdbc;

import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;

/**
 * The JDBC read-write and multi-key locks' own guarantees on a real PostgreSQL server.
 */
class PostgresFamilyTests extends AbstractJdbcFamilyTests {

	@Override
	Supplier<HikariDataSource> dataSources() {
		return TestDatabases::postgres;
	}

	@Override
	String multiKeyWrite() {
		return "INSERT INTO family_lock AS l";
	}

}
