package dev.distlock.jdbc;

import dev.distlock.contract.AbstractReadWriteLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The published read-write lock contract with MySQL 8's statements, run on a real MariaDB
 * server: MariaDB sends each take as one compound statement, which MySQL lacks.
 */
@Tag("server")
class MySqlOnMariaDbReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static JdbcPair pair;

	@BeforeAll
	static void start() {
		pair = JdbcPair.mysqlOnMariadb();
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
