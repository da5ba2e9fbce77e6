package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/** The JDBC store against a PostgreSQL server of its own (stopped, paused, restarted). */
class PostgresServerTests extends AbstractJdbcServerTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

}
