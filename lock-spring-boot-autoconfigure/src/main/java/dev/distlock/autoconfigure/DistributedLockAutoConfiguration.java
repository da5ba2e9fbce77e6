package dev.distlock.autoconfigure;

import dev.distlock.LockLostEvent;
import dev.distlock.LockTemplate;
import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Auto-configuration of distributed locks on Redis: a {@link LockProvider} over the
 * application's {@link RedisConnectionFactory}, the shared {@link RenewalScheduler}, the
 * {@link LockTemplate}, and the {@code @DistributedLock} advisor. Every bean backs off
 * when the application defines its own.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DistributedLockProperties.class)
@Import(DistributedLockAutoConfiguration.AdvisorConfiguration.class)
public final class DistributedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LockOptionsResolver distributedLockOptionsResolver(DistributedLockProperties properties) {
		return new LockOptionsResolver(properties);
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	RenewalScheduler distributedLockRenewalScheduler() {
		return new RenewalScheduler();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LockProvider.class)
	LockTemplate lockTemplate(LockProvider lockProvider, RenewalScheduler renewalScheduler, LockOptionsResolver options,
			DistributedLockProperties properties, ApplicationEventPublisher events) {
		options.checkSupportedBy(lockProvider);
		return new DefaultLockTemplate(lockProvider, renewalScheduler, options.defaults(),
				(lease, reason, holder) -> events
					.publishEvent(new LockLostEvent(lease, reason, (holder != null) ? holder.getName() : "none")),
				properties.isReleaseAfterCommit());
	}

	@Bean
	@ConditionalOnBean(LockTemplate.class)
	static ReleaseOnShutdown distributedLockReleaseOnShutdown(LockTemplate lockTemplate) {
		return new ReleaseOnShutdown(lockTemplate);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	static class RedisProviderConfiguration {

		@Bean
		@ConditionalOnMissingBean
		LockProvider distributedLockProvider(RedisConnectionFactory connectionFactory, LockOptionsResolver options,
				DistributedLockProperties properties) {
			boolean cluster = lettuce(connectionFactory).isClusterAware();
			if (cluster && properties.getWaitForReplicas() > 0) {
				throw new InvalidConfigurationPropertyValueException("distributed-lock.wait-for-replicas",
						properties.getWaitForReplicas(),
						"The replica guard is not supported on a Redis Cluster yet: Spring Data Redis sends the"
								+ " arguments of WAIT as keys, so it would go to the node of their slot, not the lock's,"
								+ " and confirm the wrong writes. Set it to 0 on a cluster.");
			}
			return new RedisLockProvider(connectionFactory, properties.getKeyPrefix(), cluster,
					properties.getWaitForReplicas(), properties.getWaitForReplicasTimeout(),
					properties.getStoreTimeout());
		}

		/**
		 * The store needs Lettuce: it detects a cluster from it and bounds each call by
		 * its own deadline, which other clients cannot do.
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

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(
			name = "org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor")
	static class TransactionOrderCheckConfiguration {

		@Bean
		static TransactionOrderCheck distributedLockTransactionOrderCheck(ListableBeanFactory beanFactory) {
			return new TransactionOrderCheck(beanFactory);
		}

	}

	/**
	 * The advisor is created while other beans are being proxied, possibly early, so it
	 * depends on nothing eagerly: options and the template are looked up on first use.
	 */
	@Configuration(proxyBeanMethods = false)
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@Import(LockAutoProxyRegistrar.class)
	static class AdvisorConfiguration {

		@Bean
		@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
		@ConditionalOnMissingBean(DistributedLockAdvisor.class)
		static DistributedLockAdvisor distributedLockAdvisor(ObjectProvider<LockOptionsResolver> options,
				ObjectProvider<LockTemplate> template, ObjectProvider<LockProvider> provider,
				ConfigurableListableBeanFactory beanFactory, Environment environment) {
			int order = environment.getProperty("distributed-lock.order", Integer.class, 2147483547);
			boolean allowTypes = environment.getProperty("distributed-lock.allow-type-references-in-keys",
					Boolean.class, false);
			return new DistributedLockAdvisor((name) -> options.getObject().named(name), () -> {
				LockTemplate available = template.getIfAvailable();
				if (available == null) {
					throw new IllegalStateException("@DistributedLock needs a LockTemplate bean, and there is none:"
							+ " configure Redis (spring.data.redis.*) or define a LockProvider bean");
				}
				return available;
			}, beanFactory, order, allowTypes, (lockOptions) -> {
				LockProvider store = provider.getIfUnique();
				return (store != null) ? LockOptionsResolver.unsupported(lockOptions, store) : null;
			});
		}

	}

}
