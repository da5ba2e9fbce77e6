package dev.distlock.jdbc;

import java.util.List;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;

/**
 * Multi-key and read-write locks under faults on a MariaDB server of their own, which the
 * faults kill and start again on its data (InnoDB's redo log, written out at every
 * commit).
 */
class MariaDbFamilyFaultTests extends AbstractJdbcFamilyFaultTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.start();
	}

	@Override
	boolean ownServer() {
		return true;
	}

	@Override
	List<String> faultNames() {
		return List.of("connections cut", "partition", "server restarted");
	}

	/**
	 * Without the restart unless soaking: the default run lasts 6 s, of which a MariaDB
	 * restart and its pools' reconnection take too much on a loaded machine to leave the
	 * writers a turn; the multi-key runs check the restart.
	 */
	@Override
	List<String> readWriteFaultNames() {
		return Boolean.getBoolean("distlock.soak") ? faultNames() : List.of("connections cut", "partition");
	}

}
