package dev.distlock.harness.redis;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fault.FencedResource;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.SharedCounter;

/**
 * The harness's resources in Redis, for the fault and fuzz tests of any store: the
 * {@link ResourceFactory} a worker JVM instantiates by name. The resources live on the
 * redis-server named by the settings {@link #HOST} (127.0.0.1 if absent) and
 * {@link #PORT}; {@link #settings(RedisServer)} makes them. Only plain sockets are used,
 * so a store's tests need no Redis client library.
 */
public final class RedisResources implements ResourceFactory {

	/** Setting: the resource server's host. */
	public static final String HOST = "resource.host";

	/** Setting: the resource server's port. */
	public static final String PORT = "resource.port";

	/** The settings that point the factory at {@code server}. */
	public static Map<String, String> settings(RedisServer server) {
		Map<String, String> settings = new LinkedHashMap<>();
		settings.put(HOST, server.host());
		settings.put(PORT, Integer.toString(server.port()));
		return settings;
	}

	@Override
	public FencedResource fencedResource(Map<String, String> settings) {
		return new RedisFencedResource(host(settings), port(settings));
	}

	@Override
	public FencedRegister fencedRegister(Map<String, String> settings) {
		return new RedisFencedRegister(host(settings), port(settings));
	}

	@Override
	public SharedCounter sharedCounter(Map<String, String> settings) {
		return new RedisSharedCounter(host(settings), port(settings));
	}

	private static String host(Map<String, String> settings) {
		return settings.getOrDefault(HOST, "127.0.0.1");
	}

	private static int port(Map<String, String> settings) {
		return (int) WorkerArgs.number(settings, PORT);
	}

}
