package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/** Local hand-over on a real PostgreSQL server; see {@link AbstractJdbcHandoverTests}. */
class PostgresHandoverTests extends AbstractJdbcHandoverTests {

	@Override
	DatabaseServer server() {
		return PostgresServer.shared();
	}

}
