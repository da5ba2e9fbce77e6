package dev.distlock.jdbc;

import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.harness.jdbc.MariaDbServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A short MariaDB smoke, in the default build, of what {@link MariaDbServerTests} and
 * {@link MariaDbCrossJvmTests} run in full with {@code -Psoak}: on one MariaDB server of
 * its own, a held lock survives a restart of the server, calls to the server paused fail
 * within their bounds (leased and transaction locks), and the cross-JVM fuzz test
 * (threads plus a worker JVM doing read-pause-write, local hand-over on) loses no
 * increment. About 45 s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class MariaDbSmokeTests {

	private MariaDbServer server;

	@BeforeAll
	void startServer() {
		this.server = MariaDbServer.start();
	}

	@AfterAll
	void closeServer() {
		this.server.close();
	}

	@Test
	void locksSurviveADatabaseRestart() {
		withTwoProviders((provider, other, otherDataSource) -> AbstractJdbcServerTests
			.assertLocksSurviveARestart(this.server, provider, other));
	}

	@Test
	void aHungServerFailsCallsWithinTheStoreTimeout() {
		withTwoProviders((provider, other, otherDataSource) -> AbstractJdbcServerTests
			.assertAHungServerFailsCallsWithinTheStoreTimeout(this.server, provider, other, otherDataSource));
	}

	/** Two providers on pools of their own, the table created. */
	private void withTwoProviders(TwoProviders test) {
		try (HikariDataSource dataSource = this.server.newDataSource();
				HikariDataSource otherDataSource = this.server.newDataSource();
				JdbcLockProvider provider = new JdbcLockProvider(dataSource, AbstractJdbcServerTests.TABLE);
				JdbcLockProvider other = new JdbcLockProvider(otherDataSource, AbstractJdbcServerTests.TABLE)) {
			provider.createTableIfMissing();
			test.run(provider, other, otherDataSource);
		}
	}

	@FunctionalInterface
	private interface TwoProviders {

		void run(JdbcLockProvider provider, JdbcLockProvider other, DataSource otherDataSource);

	}

	@Test
	void aTransactionLockOnAHungServerFailsWithinItsBound() {
		try (HikariDataSource dataSource = this.server.newDataSource()) {
			AbstractJdbcServerTests.assertATransactionLockOnAHungServerFails(this.server, dataSource);
		}
	}

	@Nested
	class Fuzz extends AbstractCrossJvmFuzzTests {

		@Override
		protected StoreFixture startStore() {
			return JdbcStoreFixture.on(MariaDbSmokeTests.this.server);
		}

	}

}
