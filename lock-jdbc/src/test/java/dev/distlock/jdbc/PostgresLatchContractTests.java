package dev.distlock.jdbc;

import dev.distlock.contract.AbstractLatchContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The published countdown latch contract on a real PostgreSQL server, with two providers
 * over pools of their own standing for two JVMs.
 */
@Tag("server")
class PostgresLatchContractTests extends AbstractLatchContractTests {

	private static JdbcPair pair;

	@BeforeAll
	static void start() {
		pair = new JdbcPair(TestDatabases::postgres);
	}

	@AfterAll
	static void stop() {
		pair.close();
	}

	@Override
	protected LockProvider provider() {
		return pair.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return pair.other;
	}

}
