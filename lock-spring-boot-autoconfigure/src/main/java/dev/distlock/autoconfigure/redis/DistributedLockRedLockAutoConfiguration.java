package dev.distlock.autoconfigure.redis;

import java.time.Duration;
import java.util.List;

import dev.distlock.autoconfigure.ConditionalOnLockStore;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.autoconfigure.LockStoreCandidate;
import dev.distlock.redis.RedLockProvider;
import dev.distlock.spi.LockProvider;
import io.lettuce.core.RedisClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.log.LogMessage;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * RedLock: a {@link RedLockProvider} over the independent Redis masters named by
 * {@code distributed-lock.redis.redlock.nodes}, each with a Lettuce connection of its own
 * (the application's {@code spring.data.redis.*} connection is not used). Opt-in: the
 * store named {@code redlock} is available only when the masters are named, and, as any
 * store, is used when it is the only one or when {@code distributed-lock.store} names it.
 * Fewer than 3 masters, a URL that is not one Redis server, or a server named twice fails
 * startup, naming the property.
 */
@AutoConfiguration(before = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ RedLockProvider.class, LettuceConnectionFactory.class, RedisClient.class })
@Conditional(DistributedLockRedLockAutoConfiguration.OnNodes.class)
@ConditionalOnLockStore("redlock")
@EnableConfigurationProperties(DistributedLockRedLockProperties.class)
public final class DistributedLockRedLockAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockRedLockAutoConfiguration.class);

	static final String NODES = "distributed-lock.redis.redlock.nodes";

	@Bean
	LockStoreCandidate distributedLockRedLockStore() {
		return new LockStoreCandidate("redlock");
	}

	@Bean
	@ConditionalOnMissingBean
	LockProvider distributedLockProvider(DistributedLockRedLockProperties redlock,
			DistributedLockProperties properties) {
		Duration storeTimeout = properties.getStoreTimeout();
		if (storeTimeout.isNegative() || storeTimeout.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.store-timeout", storeTimeout,
					"The value must be at least 1ms.");
		}
		String prefix = redlock.getKeyPrefix();
		if (prefix == null || prefix.isEmpty()) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.redis.redlock.key-prefix", prefix,
					"The key prefix must not be empty: it is also the name of each master's fencing counter.");
		}
		List<String> nodes = redlock.getNodes();
		try {
			RedLockProvider.parse(nodes);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(NODES, String.join(",", nodes), ex.getMessage());
		}
		LockProvider provider = RedLockProvider.connect(nodes, prefix, storeTimeout);
		logger.info(LogMessage.format(
				"Distributed locks use RedLock over %d Redis masters (key prefix '%s', store" + " timeout %dms)",
				nodes.size(), prefix, storeTimeout.toMillis()));
		return provider;
	}

	/** Matches when {@code distributed-lock.redis.redlock.nodes} names any master. */
	static final class OnNodes extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			List<String> nodes = Binder.get(context.getEnvironment())
				.bind(NODES, Bindable.listOf(String.class))
				.orElse(List.of());
			return nodes.isEmpty() ? ConditionOutcome.noMatch(NODES + " is not set")
					: ConditionOutcome.match(NODES + " names " + nodes.size() + " masters");
		}

	}

}
