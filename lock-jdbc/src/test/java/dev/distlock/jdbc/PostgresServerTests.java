package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.PostgresServer;

/** The JDBC store against a PostgreSQL server of its own (stopped, paused, restarted). */
class PostgresServerTests extends AbstractJdbcServerTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

}
