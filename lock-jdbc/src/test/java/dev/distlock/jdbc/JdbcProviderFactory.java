package dev.distlock.jdbc;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fault.FaultRun;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.spi.LockProvider;
import org.jspecify.annotations.Nullable;

/**
 * A {@link JdbcLockProvider} over a Hikari pool with default settings, from the server's
 * URL and credentials, in the test JVM or a child JVM.
 */
public final class JdbcProviderFactory implements ProviderFactory {

	static final String URL = "jdbc.url";

	static final String USER = "jdbc.user";

	static final String PASSWORD = "jdbc.password";

	static final String TABLE = "jdbc.table";

	private @Nullable HikariDataSource dataSource;

	private @Nullable JdbcLockProvider provider;

	/** The settings that point the factory at {@code server}'s table {@code table}. */
	static Map<String, String> settings(DatabaseServer server, String table) {
		Map<String, String> settings = new LinkedHashMap<>();
		settings.put(URL, server.jdbcUrl());
		settings.put(USER, server.username());
		settings.put(PASSWORD, server.password());
		settings.put(TABLE, table);
		return settings;
	}

	@Override
	public LockProvider create(Map<String, String> settings) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(settings.get(URL));
		config.setUsername(settings.get(USER));
		config.setPassword(settings.get(PASSWORD));
		this.dataSource = new HikariDataSource(config);
		JdbcLockProvider.Builder builder = JdbcLockProvider.builder(this.dataSource).tableName(settings.get(TABLE));
		boolean faultRun = settings.containsKey(FaultRun.LEASE_MILLIS)
				&& !Boolean.parseBoolean(settings.get(FaultRun.CLIENT_DEFAULTS));
		if (faultRun) {
			// The tables are made with the default store timeout: a lease is short for
			// DDL on a loaded machine.
			try (JdbcLockProvider setup = JdbcLockProvider.builder(this.dataSource)
				.tableName(settings.get(TABLE))
				.build()) {
				setup.createTableIfMissing();
			}
			// In a fault run, calls time out after a lease: a hung call must not outlive
			// the lock.
			builder.storeTimeout(Duration.ofMillis(WorkerArgs.number(settings, FaultRun.LEASE_MILLIS)));
		}
		this.provider = builder.build();
		if (!faultRun) {
			this.provider.createTableIfMissing();
		}
		return this.provider;
	}

	/** Keys with a release subscriber in this JVM (PostgreSQL). */
	@Override
	public int leftOver() {
		return (this.provider != null) ? this.provider.subscribedKeys() : 0;
	}

	@Override
	public void close() {
		if (this.provider != null) {
			this.provider.close();
		}
		if (this.dataSource != null) {
			this.dataSource.close();
		}
	}

}
