package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/** Family holder JVMs paused past their lease or killed, on PostgreSQL. */
class PostgresFamilyHolderTests extends AbstractJdbcFamilyHolderTests {

	@Override
	DatabaseServer server() {
		return PostgresServer.shared();
	}

}
