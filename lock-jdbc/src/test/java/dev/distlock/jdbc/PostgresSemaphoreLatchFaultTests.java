package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/**
 * The family's semaphore and latch fault checks on a PostgreSQL server of this class's
 * own.
 */
class PostgresSemaphoreLatchFaultTests extends AbstractJdbcSemaphoreLatchFaultTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

}
