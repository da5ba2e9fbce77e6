package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.MariaDbServer;

/** Local hand-over on a real MariaDB server; see {@link AbstractJdbcHandoverTests}. */
class MariaDbHandoverTests extends AbstractJdbcHandoverTests {

	@Override
	DatabaseServer server() {
		return MariaDbServer.shared();
	}

}
