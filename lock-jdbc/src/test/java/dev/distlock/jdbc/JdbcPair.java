package dev.distlock.jdbc;

import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;

/**
 * Two providers over pools of their own on one database server, as two application
 * instances would have, on the table {@code family_lock} and its semaphore and latch
 * tables, created if missing.
 */
final class JdbcPair implements AutoCloseable {

	static final String TABLE = "family_lock";

	final HikariDataSource dataSource;

	final HikariDataSource otherDataSource;

	final JdbcLockProvider provider;

	final JdbcLockProvider other;

	JdbcPair(Supplier<HikariDataSource> pools) {
		this.dataSource = pools.get();
		this.otherDataSource = pools.get();
		this.provider = new JdbcLockProvider(this.dataSource, TABLE);
		this.provider.createTableIfMissing();
		this.provider.validateSchema();
		this.other = new JdbcLockProvider(this.otherDataSource, TABLE);
	}

	@Override
	public void close() {
		this.provider.close();
		this.other.close();
		this.dataSource.close();
		this.otherDataSource.close();
	}

}
