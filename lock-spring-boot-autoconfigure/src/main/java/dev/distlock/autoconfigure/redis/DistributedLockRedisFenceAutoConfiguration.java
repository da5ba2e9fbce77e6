package dev.distlock.autoconfigure.redis;

import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.redis.RedisFencedValues;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link RedisFencedValues} over the application's Lettuce connection factory, for fenced
 * values in Redis, when {@code lock-redis} is on the class path and there is one Lettuce
 * connection factory (or a primary one), whichever store holds the locks: a token from
 * any store fences a write to Redis. Each call is bounded by
 * {@code distributed-lock.store-timeout}.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ RedisFencedValues.class, LettuceConnectionFactory.class })
@ConditionalOnSingleCandidate(LettuceConnectionFactory.class)
@EnableConfigurationProperties(DistributedLockProperties.class)
public final class DistributedLockRedisFenceAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RedisFencedValues distributedLockRedisFencedValues(LettuceConnectionFactory connectionFactory,
			DistributedLockProperties properties) {
		return new RedisFencedValues(connectionFactory, properties.getStoreTimeout());
	}

}
