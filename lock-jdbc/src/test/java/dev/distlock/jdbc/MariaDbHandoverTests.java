package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;

/** Local hand-over on a real MariaDB server; see {@link AbstractJdbcHandoverTests}. */
class MariaDbHandoverTests extends AbstractJdbcHandoverTests {

	@Override
	DatabaseServer server() {
		return MariaDbServer.shared();
	}

}
