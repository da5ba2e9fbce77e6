package dev.distlock.jdbc;

import java.util.List;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.MariaDbServer;

/**
 * Multi-key and read-write locks under network faults on the shared MariaDB server: its
 * restart takes half a minute, so the server-restart runs are PostgreSQL's.
 */
class MariaDbFamilyFaultTests extends AbstractJdbcFamilyFaultTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.shared();
	}

	@Override
	boolean ownServer() {
		return false;
	}

	@Override
	List<String> faultNames() {
		return List.of("connections cut", "partition");
	}

}
