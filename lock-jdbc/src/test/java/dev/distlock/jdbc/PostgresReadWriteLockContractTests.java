package dev.distlock.jdbc;

import dev.distlock.contract.AbstractReadWriteLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The published read-write lock contract on a real PostgreSQL server, with two providers
 * standing for two JVMs.
 */
@Tag("server")
class PostgresReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static JdbcPair pair;

	@BeforeAll
	static void start() {
		pair = JdbcPair.postgres();
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
