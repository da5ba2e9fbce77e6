package dev.distlock.jdbc;

import dev.distlock.jdbc.dialect.JdbcLockDialect;

/**
 * The JDBC read-write and multi-key locks' own guarantees with MySQL's dialect, whose
 * transactions go statement by statement, on a real MariaDB server (no MySQL server runs
 * here).
 */
class MySqlOnMariaDbFamilyTests extends MariaDbFamilyTests {

	@Override
	JdbcLockDialect dialect() {
		return JdbcLockDialect.MYSQL;
	}

}
