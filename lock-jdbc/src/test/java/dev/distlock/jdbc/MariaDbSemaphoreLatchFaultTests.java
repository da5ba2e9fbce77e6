package dev.distlock.jdbc;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.MariaDbServer;

/**
 * The family's semaphore and latch fault checks on a MariaDB server of this class's own.
 */
class MariaDbSemaphoreLatchFaultTests extends AbstractJdbcSemaphoreLatchFaultTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.start();
	}

}
