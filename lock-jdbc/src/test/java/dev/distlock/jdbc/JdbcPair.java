package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;

/**
 * Two providers on one real database server, over pools of their own, as two application
 * instances would have, on the table {@code family_lock} and the tables of the rest of
 * the family.
 */
final class JdbcPair implements AutoCloseable {

	static final String TABLE = "family_lock";

	final HikariDataSource dataSource;

	final HikariDataSource otherDataSource;

	final JdbcLockProvider provider;

	final JdbcLockProvider other;

	JdbcPair(Supplier<HikariDataSource> dataSources) {
		this.dataSource = dataSources.get();
		this.otherDataSource = dataSources.get();
		this.provider = new JdbcLockProvider(this.dataSource, TABLE);
		this.provider.createTableIfMissing();
		this.provider.validateSchema();
		this.other = new JdbcLockProvider(this.otherDataSource, TABLE);
		// Pools filled and threads started, so that no test's first call pays for them.
		for (JdbcLockProvider warm : new JdbcLockProvider[] { this.provider, this.other }) {
			LockAttempt attempt = LockAttempt
				.join(warm.tryLock(LockRequest.shared("family-warm-up-" + UUID.randomUUID(), Duration.ofSeconds(5))));
			((LockAttempt.Acquired) attempt).handle().release();
		}
	}

	static JdbcPair postgres() {
		return new JdbcPair(TestDatabases::postgres);
	}

	static JdbcPair mariadb() {
		return new JdbcPair(TestDatabases::mariadb);
	}

	@Override
	public void close() {
		this.provider.close();
		this.other.close();
		this.dataSource.close();
		this.otherDataSource.close();
	}

}
