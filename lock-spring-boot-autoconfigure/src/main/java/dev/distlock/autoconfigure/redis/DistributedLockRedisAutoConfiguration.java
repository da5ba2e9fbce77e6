package dev.distlock.autoconfigure.redis;

import java.time.Duration;

import dev.distlock.autoconfigure.ConditionalOnLockStore;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.autoconfigure.LockStoreCandidate;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.log.LogMessage;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The Redis store: a {@link RedisLockProvider} over the application's Lettuce
 * {@link RedisConnectionFactory}, when {@code lock-redis} is on the class path, a
 * connection factory exists, and {@code distributed-lock.store} is unset or
 * {@code redis}. Settings under {@code distributed-lock.redis}.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class, before = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ RedisLockProvider.class, RedisConnectionFactory.class })
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnLockStore("redis")
public final class DistributedLockRedisAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockRedisAutoConfiguration.class);

	@Bean
	LockStoreCandidate distributedLockRedisStore() {
		return new LockStoreCandidate("redis");
	}

	@Bean
	@ConditionalOnMissingBean
	LockProvider distributedLockProvider(ObjectProvider<RedisConnectionFactory> connectionFactories,
			DistributedLockProperties properties) {
		RedisConnectionFactory connectionFactory = connectionFactories.getIfUnique();
		if (connectionFactory == null) {
			throw new IllegalStateException("The distributed-lock Redis store needs one RedisConnectionFactory, but the"
					+ " application has several and none is @Primary: mark the one for locks @Primary, or define a"
					+ " LockProvider bean (new RedisLockProvider(factory, ...)) over the one you choose");
		}
		DistributedLockProperties.Redis redis = properties.getRedis();
		check(redis, properties.getStoreTimeout());
		boolean cluster = lettuce(connectionFactory).isClusterAware();
		if (cluster && redis.getWaitForReplicas() > 0) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.wait-for-replicas",
					redis.getWaitForReplicas(),
					"The replica guard is not supported on a Redis Cluster yet: Spring Data Redis sends the"
							+ " arguments of WAIT as keys, so it would go to the node of their slot, not the lock's,"
							+ " and confirm the wrong writes. Set it to 0 on a cluster.");
		}
		RedisLockProvider provider = new RedisLockProvider(connectionFactory, redis.getKeyPrefix(), cluster,
				redis.getWaitForReplicas(), redis.getWaitForReplicasTimeout(), properties.getStoreTimeout());
		logger.info(LogMessage.format("Distributed locks use Redis (%s, key prefix '%s'%s, store timeout %dms)",
				cluster ? "cluster" : lettuce(connectionFactory).isRedisSentinelAware() ? "sentinel" : "standalone",
				redis.getKeyPrefix(),
				(redis.getWaitForReplicas() > 0)
						? ", each acquire confirmed by " + redis.getWaitForReplicas() + " replica(s)" : "",
				properties.getStoreTimeout().toMillis()));
		return provider;
	}

	@Bean
	RedisStoreShutdown distributedLockRedisStoreShutdown(ObjectProvider<LockProvider> providers) {
		return new RedisStoreShutdown(providers);
	}

	private static void check(DistributedLockProperties.Redis redis, Duration storeTimeout) {
		if (storeTimeout.isNegative() || storeTimeout.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.store-timeout", storeTimeout,
					"The value must be at least 1ms.");
		}
		String prefix = redis.getKeyPrefix();
		if (prefix == null || prefix.isEmpty() || prefix.startsWith("{")) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.key-prefix", prefix,
					"The key prefix must not be empty (lock keys need their own namespace) and must not start with"
							+ " '{'.");
		}
		if (redis.getWaitForReplicas() < 0) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.wait-for-replicas",
					redis.getWaitForReplicas(), "The value must not be negative (0 turns the guard off).");
		}
		Duration replicaTimeout = redis.getWaitForReplicasTimeout();
		if (replicaTimeout.isNegative() || replicaTimeout.isZero() || replicaTimeout.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.wait-for-replicas-timeout",
					replicaTimeout, "The value must be at least 1ms.");
		}
		if (redis.getWaitForReplicas() > 0 && replicaTimeout.compareTo(storeTimeout) >= 0) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.wait-for-replicas-timeout",
					replicaTimeout, "The value must be shorter than distributed-lock.store-timeout ("
							+ storeTimeout.toMillis() + "ms), which bounds the whole acquire.");
		}
	}

	/**
	 * The store needs Lettuce: it detects a cluster from it and bounds each call by its
	 * own deadline on Lettuce's asynchronous API, which other clients cannot do.
	 */
	private static LettuceConnectionFactory lettuce(RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
			return lettuce;
		}
		throw new IllegalStateException("The distributed-lock Redis store requires Lettuce, but the"
				+ " RedisConnectionFactory is a " + connectionFactory.getClass().getName() + ". Use Lettuce,"
				+ " Spring Boot's default Redis client: remove spring.data.redis.client-type=jedis if set,"
				+ " exclude redis.clients:jedis, and let Boot create a LettuceConnectionFactory; or define a"
				+ " LockProvider bean of your own.");
	}

}
