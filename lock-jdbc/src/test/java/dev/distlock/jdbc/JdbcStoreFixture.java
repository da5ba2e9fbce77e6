package dev.distlock.jdbc;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;

/**
 * A database server of its own for the cross-JVM tests of {@code lock-test-harness}: the
 * locks in its table {@code fuzz_lock}, the resources the workloads write to in a
 * redis-server beside it (outside the store under test).
 */
public final class JdbcStoreFixture implements StoreFixture {

	private final DatabaseServer database;

	private final RedisServer resources = RedisServer.start();

	private final String table;

	/** Whether {@link #close()} closes the database server too. */
	private final boolean ownsDatabase;

	JdbcStoreFixture(DatabaseServer database) {
		this(database, "fuzz_lock");
	}

	JdbcStoreFixture(DatabaseServer database, String table) {
		this(database, table, true);
	}

	private JdbcStoreFixture(DatabaseServer database, String table, boolean ownsDatabase) {
		this.database = database;
		this.table = table;
		this.ownsDatabase = ownsDatabase;
	}

	/**
	 * A fixture on a server that a test class started and closes itself: closing the
	 * fixture leaves it running.
	 */
	static JdbcStoreFixture on(DatabaseServer database) {
		return new JdbcStoreFixture(database, "fuzz_lock", false);
	}

	@Override
	public Class<? extends ProviderFactory> providerFactory() {
		return JdbcProviderFactory.class;
	}

	@Override
	public Class<? extends ResourceFactory> resourceFactory() {
		return RedisResources.class;
	}

	@Override
	public Map<String, String> settings() {
		Map<String, String> settings = new LinkedHashMap<>(JdbcProviderFactory.settings(this.database, this.table));
		settings.putAll(RedisResources.settings(this.resources));
		return settings;
	}

	@Override
	public void close() {
		if (this.ownsDatabase) {
			this.database.close();
		}
		this.resources.close();
	}

}
