package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/** Locks held by the caller's transaction on PostgreSQL: advisory transaction locks. */
class PostgresTransactionLockTests extends AbstractJdbcTransactionLockTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.postgres();
	}

	@Override
	String waitingSql() {
		return "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted";
	}

	@Override
	String lockWaitSettingSql() {
		return "SELECT current_setting('lock_timeout')";
	}

	@Override
	String sessionIdSql() {
		return "SELECT pg_backend_pid()";
	}

	@Override
	void killSession(JdbcTemplate admin, long id) {
		admin.queryForObject("SELECT pg_terminate_backend(" + id + ")", Boolean.class);
	}

}
