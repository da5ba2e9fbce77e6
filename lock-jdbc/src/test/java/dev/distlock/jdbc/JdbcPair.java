package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;

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
		this(dataSources, null);
	}

	/**
	 * A pair speaking {@code dialect} instead of the detected one: MySQL's statements on
	 * a MariaDB server, which runs them as MySQL 8 does.
	 */
	JdbcPair(Supplier<HikariDataSource> dataSources, @Nullable JdbcLockDialect dialect) {
		this.dataSource = dataSources.get();
		this.otherDataSource = dataSources.get();
		this.provider = provider(this.dataSource, TABLE, dialect);
		this.provider.createTableIfMissing();
		this.provider.validateSchema();
		this.other = provider(this.otherDataSource, TABLE, dialect);
		// Pools filled and threads started, so that no test's first call pays for them.
		for (JdbcLockProvider warm : new JdbcLockProvider[] { this.provider, this.other }) {
			LockAttempt attempt = LockAttempt
				.join(warm.tryLock(LockRequest.shared("family-warm-up-" + UUID.randomUUID(), Duration.ofSeconds(5))));
			((LockAttempt.Acquired) attempt).handle().release();
		}
	}

	/** A provider on {@code table}, speaking {@code dialect} if given. */
	static JdbcLockProvider provider(DataSource dataSource, String table, @Nullable JdbcLockDialect dialect) {
		JdbcLockProvider.Builder builder = JdbcLockProvider.builder(dataSource).tableName(table);
		return (dialect != null) ? builder.dialect(dialect).build() : builder.build();
	}

	static JdbcPair postgres() {
		return new JdbcPair(TestDatabases::postgres);
	}

	static JdbcPair mariadb() {
		return new JdbcPair(TestDatabases::mariadb);
	}

	/** MySQL 8's statements, run on the MariaDB server. */
	static JdbcPair mysqlOnMariadb() {
		return new JdbcPair(TestDatabases::mariadb, JdbcLockDialect.MYSQL);
	}

	@Override
	public void close() {
		this.provider.close();
		this.other.close();
		this.dataSource.close();
		this.otherDataSource.close();
	}

}
