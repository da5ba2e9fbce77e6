package dev.distlock.jdbc;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.harness.fuzz.AbstractHolderKilledTests;
import dev.distlock.harness.fuzz.AbstractHolderPausedTests;
import dev.distlock.harness.jdbc.MariaDbServer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The cross-JVM tests on MariaDB: threads plus a second JVM doing read-pause-write on a
 * fenced register, a holder JVM killed with {@code kill -9}, a holder JVM paused past its
 * lease.
 * <p>
 * Runs with {@code -Psoak} (or {@code -Ddistlock.jdbc.mariadb-servers=true}): each test
 * starts MariaDB servers of its own, which takes minutes on a small machine; the default
 * suite runs the same tests on PostgreSQL, the contract and store tests on a shared
 * MariaDB, and a short smoke of these on a MariaDB server of its own
 * ({@link MariaDbSmokeTests}: a restart, the cross-JVM fuzz test).
 */
@EnabledIfSystemProperty(named = "distlock.jdbc.mariadb-servers", matches = "true")
@Tag("server")
class MariaDbCrossJvmTests {

	static StoreFixture store() {
		return new JdbcStoreFixture(MariaDbServer.start());
	}

	@Nested
	class Fuzz extends AbstractCrossJvmFuzzTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

	@Nested
	class HolderKilled extends AbstractHolderKilledTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

	@Nested
	class HolderPaused extends AbstractHolderPausedTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

}
