package dev.distlock.jdbc;

import dev.distlock.contract.AbstractSegmentedLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The published segmented lock contract on a real MariaDB server, with two providers
 * standing for two JVMs.
 */
@Tag("server")
class MariaDbSegmentedLockContractTests extends AbstractSegmentedLockContractTests {

	private static JdbcPair pair;

	@BeforeAll
	static void start() {
		pair = JdbcPair.mariadb();
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
