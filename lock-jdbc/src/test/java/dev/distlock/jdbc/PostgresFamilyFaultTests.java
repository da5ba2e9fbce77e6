package dev.distlock.jdbc;

import java.util.List;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;

/**
 * Multi-key and read-write locks under faults on a PostgreSQL server of their own, which
 * the faults kill and start again.
 */
class PostgresFamilyFaultTests extends AbstractJdbcFamilyFaultTests {

	@Override
	DatabaseServer startServer() {
		return PostgresServer.start();
	}

	@Override
	boolean ownServer() {
		return true;
	}

	@Override
	List<String> faultNames() {
		return List.of("none", "connections cut", "partition", "server restarted");
	}

}
