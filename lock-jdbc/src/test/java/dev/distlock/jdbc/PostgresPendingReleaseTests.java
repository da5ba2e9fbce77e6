package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/** A release retried after a PostgreSQL server of its own was killed and restarted. */
class PostgresPendingReleaseTests extends AbstractJdbcPendingReleaseTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

}
