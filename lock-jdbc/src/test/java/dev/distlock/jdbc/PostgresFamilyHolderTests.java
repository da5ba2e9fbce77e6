package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.PostgresServer;

/** Family holder JVMs paused past their lease or killed, on PostgreSQL. */
class PostgresFamilyHolderTests extends AbstractJdbcFamilyHolderTests {

	@Override
	DatabaseServer server() {
		return PostgresServer.shared();
	}

}
