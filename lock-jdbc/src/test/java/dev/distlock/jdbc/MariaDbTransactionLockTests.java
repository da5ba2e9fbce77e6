package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/** Locks held by the caller's transaction on MariaDB: row locks on the key's row. */
class MariaDbTransactionLockTests extends AbstractJdbcTransactionLockTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

	@Override
	String waitingSql() {
		// The locking read of another connection still running on the server: InnoDB does
		// not always list a waiting transaction as a lock wait, so the statement itself
		// is looked for (after the driver's prefix that bounds its time).
		return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID()"
				+ " AND command = 'Query' AND info LIKE '%SELECT fence, %FOR UPDATE'";
	}

	@Override
	String lockWaitSettingSql() {
		return "SELECT CAST(@@SESSION.innodb_lock_wait_timeout AS CHAR)";
	}

	@Override
	String sessionIdSql() {
		return "SELECT CONNECTION_ID()";
	}

	@Override
	void killSession(JdbcTemplate admin, long id) {
		admin.execute("KILL " + id);
	}

}
