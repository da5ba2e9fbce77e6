package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/** The JDBC store's own tests on a real MariaDB server. */
class MariaDbStoreTests extends AbstractJdbcStoreTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	String ageAllRowsSql() {
		return "UPDATE " + TABLE + " SET expires_at = expires_at - INTERVAL 2 DAY WHERE owner IS NULL"
				+ " OR expires_at < UTC_TIMESTAMP(6)";
	}

	@Override
	void terminateOtherConnections(JdbcTemplate admin) {
		for (Long id : admin
			.queryForList(
					"SELECT id FROM information_schema.processlist WHERE user = CURRENT_USER()".replace(
							"CURRENT_USER()", "SUBSTRING_INDEX(CURRENT_USER(), '@', 1)") + " AND id <> CONNECTION_ID()",
					Long.class)) {
			try {
				admin.execute("KILL " + id);
			}
			catch (RuntimeException ex) {
				// Gone meanwhile.
			}
		}
	}

	@Override
	String remainingMillisSql() {
		return "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 FROM " + TABLE
				+ " WHERE name = ?";
	}

}
