package dev.distlock.jdbc;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The JDBC store against a MariaDB server of its own (stopped, paused, restarted).
 * <p>
 * Runs with {@code -Psoak} (or {@code -Ddistlock.jdbc.mariadb-servers=true}): each test
 * starts MariaDB servers of its own, which takes minutes on a small machine; the default
 * suite runs the same tests on PostgreSQL, the contract and store tests on a shared
 * MariaDB, and a short smoke of these on a MariaDB server of its own
 * ({@link MariaDbSmokeTests}: a restart, the cross-JVM fuzz test).
 */
@EnabledIfSystemProperty(named = "distlock.jdbc.mariadb-servers", matches = "true")
class MariaDbServerTests extends AbstractJdbcServerTests {

	@Override
	DatabaseServer startServer() {
		return MariaDbServer.start();
	}

	/** Each key's own release, sent together. */
	@Override
	long multiKeyReleaseStatements(int keys) {
		return keys;
	}

}
