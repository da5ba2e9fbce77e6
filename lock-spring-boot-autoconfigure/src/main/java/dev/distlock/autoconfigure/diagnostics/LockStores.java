package dev.distlock.autoconfigure.diagnostics;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.distlock.autoconfigure.LockStoreCandidate;
import org.jspecify.annotations.Nullable;

import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The stores {@code distributed-lock.store} accepts, which of them are on the class path,
 * and what each needs to be available: what a report on a store that cannot be used
 * tells.
 */
final class LockStores {

	static final String PROPERTY = "distributed-lock.store";

	private final Environment environment;

	private final @Nullable ClassLoader classLoader;

	LockStores(Environment environment, @Nullable ClassLoader classLoader) {
		this.environment = environment;
		this.classLoader = classLoader;
	}

	/** The value of {@code distributed-lock.store}, trimmed, or null when not set. */
	@Nullable String chosen() {
		String chosen = this.environment.getProperty(PROPERTY);
		return (chosen == null || chosen.isBlank()) ? null : chosen.trim();
	}

	/** Why no store is in use, in one sentence. */
	String whyNone() {
		if ("false".equalsIgnoreCase(this.environment.getProperty("distributed-lock.enabled"))) {
			return "distributed-lock.enabled is false, which turns distributed locks off";
		}
		String chosen = chosen();
		if (chosen == null) {
			return PROPERTY + " is not set, and no store is available (in-memory is used only when named)";
		}
		Store store = Store.named(chosen);
		if (store == null) {
			return PROPERTY + " is '" + chosen + "', which is not a store";
		}
		if (!onClassPath(store)) {
			return PROPERTY + " is '" + chosen + "', but the " + store.label + " store is not on the class path";
		}
		return PROPERTY + " is '" + chosen + "', but the " + store.label + " store is not available: it needs "
				+ store.needs;
	}

	/**
	 * What to do: the allowed values, and the stores on the class path with their needs.
	 */
	String action() {
		List<String> present = new ArrayList<>();
		List<String> absent = new ArrayList<>();
		for (Store store : Store.values()) {
			if (onClassPath(store)) {
				present.add(store.value + " (needs " + store.needs + ")");
			}
			else {
				absent.add(store.value + ": " + store.module);
			}
		}
		return "Set " + PROPERTY + " to one of " + String.join(", ", LockStoreCandidate.NAMES)
				+ ", and give that store what it needs. Stores on the class path: " + String.join("; ", present) + "."
				+ (absent.isEmpty() ? "" : " To use another, add its module (" + String.join("; ", absent) + ").");
	}

	private boolean onClassPath(Store store) {
		for (String type : store.types) {
			if (!ClassUtils.isPresent(type, this.classLoader)) {
				return false;
			}
		}
		return true;
	}

	/** The stores, as {@code distributed-lock.store} names them. */
	enum Store {

		REDIS("redis", "Redis", "a Redis connection (spring.data.redis.*)", "lock-spring-boot-starter",
				"dev.distlock.redis.RedisLockProvider",
				"org.springframework.data.redis.connection.RedisConnectionFactory"),

		REDLOCK("redlock", "RedLock", "distributed-lock.redis.redlock.nodes (at least 3 masters)",
				"lock-spring-boot-starter", "dev.distlock.redis.RedLockProvider", "io.lettuce.core.RedisClient"),

		JDBC("jdbc", "JDBC", "one DataSource, or a primary one (spring.datasource.*)", "lock-spring-boot-starter-jdbc",
				"dev.distlock.jdbc.JdbcLockProvider", "org.springframework.jdbc.core.JdbcTemplate"),

		ZOOKEEPER("zookeeper", "ZooKeeper", "distributed-lock.zookeeper.connect-string or a CuratorFramework bean",
				"lock-spring-boot-starter-zookeeper", "dev.distlock.zookeeper.ZookeeperLockProvider",
				"org.apache.curator.framework.CuratorFramework"),

		IN_MEMORY("in-memory", "in-memory", PROPERTY + "=in-memory; it locks within one JVM only",
				"part of every starter", "dev.distlock.inmemory.InMemoryLockProvider");

		final String value;

		final String label;

		final String needs;

		final String module;

		final String[] types;

		Store(String value, String label, String needs, String module, String... types) {
			this.value = value;
			this.label = label;
			this.needs = needs;
			this.module = module;
			this.types = types;
		}

		static @Nullable Store named(String value) {
			for (Store store : values()) {
				if (store.value.equals(value.toLowerCase(Locale.ROOT))) {
					return store;
				}
			}
			return null;
		}

	}

}
