package dev.distlock.jdbc;

import dev.distlock.contract.AbstractReactiveLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The reactive contract on a real MariaDB server, with two providers over pools of their
 * own standing for two JVMs.
 */
@Tag("server")
class MariaDbReactiveLockContractTests extends AbstractReactiveLockContractTests {

	private static JdbcPair pair;

	@BeforeAll
	static void start() {
		pair = new JdbcPair(TestDatabases::mariadb);
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
