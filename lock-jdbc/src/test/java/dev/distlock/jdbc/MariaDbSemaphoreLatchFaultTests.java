package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;

/**
 * The family's semaphore and latch fault checks on a MariaDB server of this class's own.
 */
class MariaDbSemaphoreLatchFaultTests extends AbstractJdbcSemaphoreLatchFaultTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.start();
	}

	/**
	 * Only when soaking: a latch run lasts 2 s by default, of which a MariaDB restart and
	 * its pools' reconnection can take all on a loaded machine, leaving no round to open;
	 * the semaphore run restarts it.
	 */
	@Override
	boolean restartsInLatchRuns() {
		return Boolean.getBoolean("distlock.soak");
	}

}
