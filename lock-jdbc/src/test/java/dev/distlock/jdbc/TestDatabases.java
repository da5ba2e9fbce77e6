package dev.distlock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.testsupport.MariaDbServer;
import dev.distlock.testsupport.PostgresServer;

/** Pools with HikariCP's default settings on the servers shared by this JVM's tests. */
final class TestDatabases {

	private TestDatabases() {
	}

	static HikariDataSource postgres() {
		return PostgresServer.shared().newDataSource();
	}

	static HikariDataSource mariadb() {
		return MariaDbServer.shared().newDataSource();
	}

}
