package dev.distlock.redis;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;

/**
 * One fresh redis-server for the cross-JVM tests of {@code lock-test-harness}: the locks
 * ({@link RedisProviderFactory}) and the resources ({@link RedisResources}) on the same
 * server, under keys of their own.
 */
public final class RedisStoreFixture implements RedisFixture {

	private final RedisServer server = RedisServer.start();

	/** The server. */
	public RedisServer server() {
		return this.server;
	}

	@Override
	public Map<String, String> settings() {
		Map<String, String> settings = new LinkedHashMap<>(RedisProviderFactory.settings(this.server.port()));
		settings.putAll(RedisResources.settings(this.server));
		return settings;
	}

	@Override
	public void close() {
		this.server.close();
	}

}
