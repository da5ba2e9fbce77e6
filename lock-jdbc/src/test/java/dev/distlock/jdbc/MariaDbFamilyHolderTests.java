package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.MariaDbServer;

/** Family holder JVMs paused past their lease or killed, on MariaDB. */
class MariaDbFamilyHolderTests extends AbstractJdbcFamilyHolderTests {

	@Override
	DatabaseServer server() {
		return MariaDbServer.shared();
	}

}
