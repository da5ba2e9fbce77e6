package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.PostgresServer;

/** Local hand-over on a real PostgreSQL server; see {@link AbstractJdbcHandoverTests}. */
class PostgresHandoverTests extends AbstractJdbcHandoverTests {

	@Override
	DatabaseServer server() {
		return PostgresServer.shared();
	}

}
