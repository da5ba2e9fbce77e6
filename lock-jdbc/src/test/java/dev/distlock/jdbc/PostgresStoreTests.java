package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/** The JDBC store's own tests on a real PostgreSQL server. */
class PostgresStoreTests extends AbstractJdbcStoreTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

	@Override
	String ageAllRowsSql() {
		return "UPDATE " + TABLE + " SET expires_at = expires_at - interval '2 days' WHERE owner IS NULL"
				+ " OR expires_at < clock_timestamp()";
	}

	@Override
	void terminateOtherConnections(JdbcTemplate admin) {
		admin.queryForList("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
				+ " AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
	}

	@Override
	String remainingMillisSql() {
		return "SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint FROM " + TABLE
				+ " WHERE name = ?";
	}

}
