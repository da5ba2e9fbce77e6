package dev.distlock.jdbc;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.testsupport.DatabaseServer;
import dev.distlock.testsupport.ProviderFactory;
import dev.distlock.testsupport.RedisResources;
import dev.distlock.testsupport.RedisServer;
import dev.distlock.testsupport.ResourceFactory;
import dev.distlock.testsupport.StoreFixture;

/**
 * A database server of its own for the cross-JVM tests of {@code lock-test-support}: the
 * locks in its table {@code fuzz_lock}, the resources the workloads write to in a
 * redis-server beside it (outside the store under test).
 */
public final class JdbcStoreFixture implements StoreFixture {

	private final DatabaseServer database;

	private final RedisServer resources = RedisServer.start();

	private final String table;

	JdbcStoreFixture(DatabaseServer database) {
		this(database, "fuzz_lock");
	}

	JdbcStoreFixture(DatabaseServer database, String table) {
		this.database = database;
		this.table = table;
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
		this.database.close();
		this.resources.close();
	}

}
