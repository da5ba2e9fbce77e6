package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;

/** Family holder JVMs paused past their lease or killed, on MariaDB. */
class MariaDbFamilyHolderTests extends AbstractJdbcFamilyHolderTests {

	@Override
	DatabaseServer server() {
		return MariaDbServer.shared();
	}

}
