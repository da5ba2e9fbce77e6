package dev.distlock.jdbc;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.harness.fuzz.AbstractHolderKilledTests;
import dev.distlock.harness.fuzz.AbstractHolderPausedTests;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The cross-JVM tests on PostgreSQL: threads plus a second JVM doing read-pause-write on
 * a fenced register, a holder JVM killed with {@code kill -9}, a holder JVM paused past
 * its lease.
 */
@Tag("server")
class PostgresCrossJvmTests {

	static StoreFixture store() {
		return new JdbcStoreFixture(PostgresServer.start());
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
