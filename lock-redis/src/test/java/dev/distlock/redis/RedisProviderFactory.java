package dev.distlock.redis;

import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fault.FaultRun;
import dev.distlock.spi.LockProvider;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis store for the harness of {@code lock-test-harness}, in the test JVM and in
 * its child JVMs: a {@link RedisLockProvider} with the {@link TestRedis#PREFIX} over a
 * Lettuce connection factory of its own to {@link #HOST}:{@link #PORT}. The connections
 * have the {@link TestRedis} command timeout (10 s), or in a fault run the lease
 * ({@link FaultRun#LEASE_MILLIS}), or Lettuce's default settings (a 60 s command timeout)
 * where the fault class keeps the client's defaults ({@link FaultRun#CLIENT_DEFAULTS}).
 */
public final class RedisProviderFactory implements ProviderFactory {

	/** Setting: the lock server's (or its proxy's) host; 127.0.0.1 if absent. */
	public static final String HOST = "redis.host";

	/** Setting: the lock server's (or its proxy's) port. */
	public static final String PORT = "redis.port";

	private LettuceConnectionFactory connections;

	private RedisLockProvider provider;

	private boolean closed;

	/** The settings that point the factory at {@code port} on this host's loopback. */
	public static Map<String, String> settings(int port) {
		return Map.of(HOST, "127.0.0.1", PORT, Integer.toString(port));
	}

	@Override
	public LockProvider create(Map<String, String> settings) {
		if (this.provider != null) {
			throw new IllegalStateException("One provider per factory");
		}
		String host = settings.getOrDefault(HOST, "127.0.0.1");
		int port = (int) WorkerArgs.number(settings, PORT);
		this.connections = connections(host, port, settings);
		this.provider = new RedisLockProvider(this.connections, TestRedis.PREFIX, false);
		return this.provider;
	}

	private static LettuceConnectionFactory connections(String host, int port, Map<String, String> settings) {
		if (!settings.containsKey(FaultRun.CLIENT_DEFAULTS)) {
			return TestRedis.connectionFactory(host, port, Duration.ofSeconds(10));
		}
		if (!Boolean.parseBoolean(settings.get(FaultRun.CLIENT_DEFAULTS))) {
			// Commands time out after a lease: a hung call must not outlive the lock.
			return TestRedis.connectionFactory(host, port,
					Duration.ofMillis(WorkerArgs.number(settings, FaultRun.LEASE_MILLIS)));
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.defaultConfiguration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/** Keys with a release subscriber. */
	@Override
	public int leftOver() {
		return (this.provider != null) ? this.provider.subscribedKeys() : 0;
	}

	/** Closes the provider and its connections, once. */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		if (this.provider != null) {
			this.provider.close();
		}
		if (this.connections != null) {
			this.connections.destroy();
		}
	}

}
