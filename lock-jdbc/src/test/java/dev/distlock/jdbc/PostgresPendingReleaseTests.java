package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.PostgresServer;

/** A release retried after a PostgreSQL server of its own was killed and restarted. */
class PostgresPendingReleaseTests extends AbstractJdbcPendingReleaseTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

}
