package dev.distlock.jdbc;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.testsupport.PostgresServer;

/** Temporary: the dev server, until the launchers land. */
final class TestDatabases {

	private TestDatabases() {
	}

	static HikariDataSource postgres() {
		return PostgresServer.shared().newDataSource();
	}

	static HikariDataSource mariadb() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl("jdbc:mariadb://127.0.0.1:33069/distlock");
		config.setUsername("dl");
		config.setPassword("dl");
		return new HikariDataSource(config);
	}

}
