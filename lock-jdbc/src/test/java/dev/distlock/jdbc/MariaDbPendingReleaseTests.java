package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;

/** A release retried after a MariaDB server of its own was killed and restarted. */
class MariaDbPendingReleaseTests extends AbstractJdbcPendingReleaseTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.start();
	}

}
