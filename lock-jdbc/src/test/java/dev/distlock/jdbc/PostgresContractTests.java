package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.testsupport.AbstractLockProviderContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The published contract suite on a real PostgreSQL server. */
class PostgresContractTests extends AbstractLockProviderContractTests {

	private static JdbcLockProvider provider;

	private static JdbcLockProvider other;

	@BeforeAll
	static void start() {
		provider = new JdbcLockProvider(TestDatabases.postgres(), "contract_lock");
		provider.createTableIfMissing();
		provider.validateSchema();
		other = new JdbcLockProvider(TestDatabases.postgres(), "contract_lock");
		warmUp(provider, other);
	}

	/** Pools filled and threads started, so that no test's first call pays for them. */
	static void warmUp(JdbcLockProvider... providers) {
		for (JdbcLockProvider warm : providers) {
			LockAttempt attempt = warm.tryLock("contract-warm-up-" + UUID.randomUUID(), Duration.ofSeconds(5));
			((LockAttempt.Acquired) attempt).handle().release();
		}
	}

	@AfterAll
	static void stop() {
		provider.close();
		other.close();
	}

	@Override
	protected LockProvider provider() {
		return provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return other;
	}

}
