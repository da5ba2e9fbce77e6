package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.contract.AbstractLockProviderContractTests;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;

/**
 * The published contract suite on a real database server: two providers over pools of
 * their own, as two application instances would have, on the table {@code contract_lock}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
abstract class AbstractJdbcContractTests extends AbstractLockProviderContractTests {

	private HikariDataSource dataSource;

	private HikariDataSource otherDataSource;

	private JdbcLockProvider provider;

	private JdbcLockProvider other;

	/** A pool with HikariCP's default settings on the server under test. */
	abstract HikariDataSource newDataSource();

	@BeforeAll
	void start() {
		this.dataSource = newDataSource();
		this.otherDataSource = newDataSource();
		this.provider = new JdbcLockProvider(this.dataSource, "contract_lock");
		this.provider.createTableIfMissing();
		this.provider.validateSchema();
		this.other = new JdbcLockProvider(this.otherDataSource, "contract_lock");
		// Pools filled and threads started, so that no test's first call pays for them.
		for (JdbcLockProvider warm : new JdbcLockProvider[] { this.provider, this.other }) {
			LockAttempt attempt = LockAttempt.join(warm
				.tryLock(LockRequest.exclusive("contract-warm-up-" + UUID.randomUUID(), Duration.ofSeconds(5))));
			((LockAttempt.Acquired) attempt).handle().release();
		}
	}

	@AfterAll
	void stop() {
		this.provider.close();
		this.other.close();
		this.dataSource.close();
		this.otherDataSource.close();
	}

	@Override
	protected LockProvider provider() {
		return this.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return this.other;
	}

}
