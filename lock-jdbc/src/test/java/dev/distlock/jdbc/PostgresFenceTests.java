package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

/** {@link JdbcFence} on a real PostgreSQL server. */
class PostgresFenceTests extends AbstractJdbcFenceTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

	@Override
	String lockWaitsSql() {
		return "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'";
	}

}
