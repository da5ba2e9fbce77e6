package dev.distlock.bench;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

import com.baomidou.lock.LockInfo;
import com.baomidou.lock.LockTemplate;
import com.baomidou.lock.executor.RedisTemplateLockExecutor;
import com.baomidou.lock.spring.boot.autoconfigure.Lock4jProperties;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * One lock library as the benchmark drives it: a blocking lock on a key, released by the
 * same thread. Each instance is one client (one JVM's worth of connections).
 */
interface Lib extends AutoCloseable {

	/** The libraries, in report order; the baseline first. */
	List<String> NAMES = List.of("raw-lettuce", "distlock", "redisson", "si-spin", "si-pubsub", "lock4j");

	String name();

	/** Blocks until the lock is held; the returned action releases it. */
	Unlock lock(String key) throws Exception;

	@Override
	void close();

	@FunctionalInterface
	interface Unlock {

		void unlock() throws Exception;

	}

	/** A new client of library {@code name} on 127.0.0.1:{@code port}. */
	static Lib create(String name, int port) {
		return switch (name) {
			case "raw-lettuce" -> new Raw(port);
			case "distlock" -> new Distlock(port, Duration.ofSeconds(30));
			case "distlock-handover" -> new Distlock(port, Distlock.options(Duration.ofSeconds(30), false),
					"distlock-handover", HandoverSettings.ON);
			case "redisson" -> new RedissonLib(port, 30_000);
			case "si-spin" -> new Integration(port, false);
			case "si-pubsub" -> new Integration(port, true);
			case "lock4j" -> new Lock4j(port);
			default -> throw new IllegalArgumentException("Unknown library " + name);
		};
	}

	static LettuceConnectionFactory connectionFactory(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/** The baseline: SET NX PX, EVALSHA compare-and-delete, 1 ms polls while busy. */
	final class Raw implements Lib {

		private static final String RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then"
				+ " return redis.call('del', KEYS[1]) end return 0";

		private final RedisClient client;

		private final StatefulRedisConnection<String, String> connection;

		private final RedisCommands<String, String> redis;

		private final String sha;

		Raw(int port) {
			this.client = RedisClient.create("redis://127.0.0.1:" + port);
			this.connection = this.client.connect();
			this.redis = this.connection.sync();
			this.sha = this.redis.scriptLoad(RELEASE);
		}

		@Override
		public String name() {
			return "raw-lettuce";
		}

		@Override
		public Unlock lock(String key) {
			String token = UUID.randomUUID().toString();
			while (!"OK".equals(this.redis.set(key, token, SetArgs.Builder.nx().px(30_000)))) {
				LockSupport.parkNanos(1_000_000);
			}
			return () -> this.redis.evalsha(this.sha, ScriptOutputType.INTEGER, new String[] { key }, token);
		}

		String info(String section) {
			return this.redis.info(section);
		}

		/** One PING round trip, in nanoseconds. */
		long ping() {
			long start = System.nanoTime();
			this.redis.ping();
			return System.nanoTime() - start;
		}

		@Override
		public void close() {
			this.connection.close();
			this.client.shutdown();
		}

	}

	final class Distlock implements Lib {

		final LettuceConnectionFactory factory;

		final RenewalScheduler scheduler = new RenewalScheduler();

		final RedisLockProvider provider;

		final DefaultLockTemplate template;

		private final String name;

		Distlock(int port, Duration lease) {
			this(port, options(lease, false), "distlock");
		}

		Distlock(int port, LockOptions options, String name) {
			this(port, options, name, HandoverSettings.DEFAULTS);
		}

		/**
		 * With local hand-over as given (on by default; "distlock-handover" names it
		 * explicitly).
		 */
		Distlock(int port, LockOptions options, String name, HandoverSettings handover) {
			this.factory = connectionFactory(port);
			this.provider = new RedisLockProvider(this.factory, "distlock:", false);
			this.template = new DefaultLockTemplate(this.provider, this.scheduler, options, LeaseLossListener.NONE,
					true, LockObserver.NONE, handover);
			this.name = name;
		}

		/**
		 * The options every distlock runner takes: 60 s wait, renewed lease, 100 ms
		 * retry.
		 */
		static LockOptions options(Duration lease, boolean fair) {
			return LockOptions.builder()
				.waitTime(Duration.ofSeconds(60))
				.leaseTime(lease)
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.fair(fair)
				.build();
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Unlock lock(String key) {
			Lease lease = this.template.acquire(key, LockOptions.defaults());
			return lease::release;
		}

		@Override
		public void close() {
			this.scheduler.close();
			this.provider.close();
			this.factory.destroy();
		}

	}

	final class RedissonLib implements Lib {

		final RedissonClient client;

		RedissonLib(int port, long watchdogMillis) {
			Config config = new Config();
			config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
			config.setLockWatchdogTimeout(watchdogMillis);
			this.client = Redisson.create(config);
		}

		@Override
		public String name() {
			return "redisson";
		}

		@Override
		public Unlock lock(String key) {
			RLock lock = this.client.getLock("redisson:" + key);
			lock.lock();
			return lock::unlock;
		}

		@Override
		public void close() {
			this.client.shutdown(0, 2, TimeUnit.SECONDS);
		}

	}

	final class Integration implements Lib {

		private final LettuceConnectionFactory factory;

		private final RedisLockRegistry registry;

		private final boolean pubSub;

		Integration(int port, boolean pubSub) {
			this.factory = connectionFactory(port);
			this.registry = new RedisLockRegistry(this.factory, "si", 30_000);
			this.pubSub = pubSub;
			if (pubSub) {
				this.registry.setRedisLockType(RedisLockRegistry.RedisLockType.PUB_SUB_LOCK);
			}
		}

		@Override
		public String name() {
			return this.pubSub ? "si-pubsub" : "si-spin";
		}

		@Override
		public Unlock lock(String key) {
			Lock lock = this.registry.obtain(key);
			lock.lock();
			return lock::unlock;
		}

		@Override
		public void close() {
			this.registry.destroy();
			this.factory.destroy();
		}

	}

	final class Lock4j implements Lib {

		private final LettuceConnectionFactory factory;

		private final LockTemplate template;

		Lock4j(int port) {
			this.factory = connectionFactory(port);
			StringRedisTemplate redis = new StringRedisTemplate(this.factory);
			Lock4jProperties properties = new Lock4jProperties();
			properties.setExpire(30_000L);
			properties.setAcquireTimeout(60_000L);
			properties.setRetryInterval(100L);
			properties.setPrimaryExecutor(RedisTemplateLockExecutor.class);
			this.template = new LockTemplate();
			this.template.setProperties(properties);
			this.template.setExecutors(List.of(new RedisTemplateLockExecutor(redis, properties)));
			try {
				this.template.afterPropertiesSet();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public String name() {
			return "lock4j";
		}

		@Override
		public Unlock lock(String key) {
			LockInfo info = this.template.lock("lock4j:" + key, 30_000, 60_000);
			if (info == null) {
				throw new IllegalStateException("lock4j did not acquire " + key);
			}
			return () -> this.template.releaseLock(info);
		}

		@Override
		public void close() {
			this.factory.destroy();
		}

	}

}
