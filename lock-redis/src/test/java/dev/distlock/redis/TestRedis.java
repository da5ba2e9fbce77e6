package dev.distlock.redis;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.UUID;

import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Connections to a test {@link RedisServer} the way an application would have them:
 * Lettuce through Spring Data Redis.
 */
public final class TestRedis {

	/** The key prefix of the lock templates made here. */
	public static final String PREFIX = "lock:";

	private TestRedis() {
	}

	/**
	 * A started connection factory for a server on this host's loopback; the caller
	 * destroys it.
	 */
	public static LettuceConnectionFactory connectionFactory(int port) {
		return connectionFactory("127.0.0.1", port, Duration.ofSeconds(10));
	}

	/** A started connection factory; the caller destroys it. */
	public static LettuceConnectionFactory connectionFactory(RedisServer server) {
		return connectionFactory(server, Duration.ofSeconds(10));
	}

	/**
	 * As {@link #connectionFactory(RedisServer)} with a command timeout, for tests that
	 * take the server away.
	 */
	public static LettuceConnectionFactory connectionFactory(RedisServer server, Duration commandTimeout) {
		return connectionFactory(server.host(), server.port(), commandTimeout);
	}

	/** A started connection factory with a command timeout; the caller destroys it. */
	public static LettuceConnectionFactory connectionFactory(String host, int port, Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * A template over a fresh {@link RedisLockProvider}, so with an owner identity of its
	 * own, as another application instance would have; by default no waiting, a 30s
	 * lease, auto-renew on.
	 */
	public static DefaultLockTemplate template(RedisConnectionFactory factory, RenewalScheduler scheduler) {
		LockOptions defaults = LockOptions.builder()
			.waitTime(Duration.ZERO)
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20))
			.build();
		return new DefaultLockTemplate(new RedisLockProvider(factory, PREFIX, false), scheduler, defaults);
	}

	/**
	 * Waits until {@code provider} answers: its connection comes up in the background,
	 * and a cold one (a cluster's topology, a handshake under a short client timeout on a
	 * loaded machine) can take longer than one store timeout; the next call connects
	 * again.
	 */
	public static void awaitAnswers(RedisLockProvider provider) {
		Conditions.await("the provider's connection is up", Duration.ofSeconds(30), () -> {
			try {
				LockAttempt.join(
						provider.tryLock(LockRequest.exclusive("warm-up-" + UUID.randomUUID(), Duration.ofMillis(1))));
				return true;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
	}

	/** Calls of one command so far, from {@code INFO commandstats}; 0 if never called. */
	public static long commandCalls(StringRedisTemplate redis, String command) {
		return commandCalls(redis).getOrDefault(command, 0L);
	}

	/** Calls per command so far, from one {@code INFO commandstats}. */
	public static Map<String, Long> commandCalls(StringRedisTemplate redis) {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
		Map<String, Long> calls = new TreeMap<>();
		if (stats == null) {
			return calls;
		}
		for (String name : stats.stringPropertyNames()) {
			if (name.startsWith("cmdstat_")) {
				calls.put(name.substring("cmdstat_".length()), parseCalls(stats.getProperty(name)));
			}
		}
		return calls;
	}

	private static long parseCalls(String line) {
		for (String field : line.split(",")) {
			if (field.startsWith("calls=")) {
				return Long.parseLong(field.substring("calls=".length()));
			}
		}
		throw new IllegalStateException("No calls= in commandstats line: " + line);
	}

	/**
	 * The owner token of the mutex at {@code lockKey} (its value is
	 * {@code <owner> <fence>}, see {@code LockScripts}), or null when none is held.
	 */
	public static @Nullable String mutexOwner(StringRedisTemplate redis, String lockKey) {
		String value = redis.opsForValue().get(lockKey);
		return (value != null) ? value.split(" ")[0] : null;
	}

	/** The fencing token of the mutex at {@code lockKey}, or null when none is held. */
	public static @Nullable String mutexFence(StringRedisTemplate redis, String lockKey) {
		String value = redis.opsForValue().get(lockKey);
		return (value != null) ? value.split(" ")[1] : null;
	}

	/**
	 * Whether a waiter marked the mutex at {@code lockKey} (its value ends in
	 * {@code " w"}), so that its release signals.
	 */
	public static boolean mutexWaited(@Nullable String value) {
		return value != null && value.endsWith(" w");
	}

	/** Script calls so far, whether by SHA or by body. */
	public static long scriptCalls(StringRedisTemplate redis) {
		Map<String, Long> calls = commandCalls(redis);
		return calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L);
	}

}
