package dev.distlock.autoconfigure;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.LockLostEvent;
import dev.distlock.LockTemplate;
import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.aop.DistributedLockRuntimeHints;
import dev.distlock.aop.LockAutoProxyRegistrar;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultAsyncLockTemplate;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LockObserver;
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
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Store-neutral auto-configuration of distributed locks: the shared
 * {@link RenewalScheduler}, the {@link LockTemplate} over whichever {@link LockProvider}
 * a store's auto-configuration (or the application) defines, the
 * {@link AsyncLockTemplate} over it, and the {@code @DistributedLock} advisor. Every bean
 * backs off when the application defines its own.
 */
@AutoConfiguration
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

	/**
	 * Fails startup when {@code distributed-lock.store} is needed and missing (several
	 * stores available) or names a store that is not available.
	 */
	@Bean
	static StoreSelectionCheck distributedLockStoreSelectionCheck(ObjectProvider<LockStoreCandidate> candidates,
			ObjectProvider<LockProvider> providers, Environment environment) {
		return new StoreSelectionCheck(candidates, providers, environment);
	}

	/**
	 * Named so that it cannot collide with other lock libraries' {@code lockTemplate}.
	 */
	@Bean
	@ConditionalOnMissingBean(LockTemplate.class)
	@ConditionalOnBean(LockProvider.class)
	DefaultLockTemplate distributedLockTemplate(LockProvider lockProvider, RenewalScheduler renewalScheduler,
			LockOptionsResolver options, DistributedLockProperties properties, ApplicationEventPublisher events,
			ObjectProvider<LockObserver> observers) {
		options.checkSupportedBy(lockProvider);
		return new DefaultLockTemplate(lockProvider, renewalScheduler, options.defaults(),
				(lease, reason, holder) -> events
					.publishEvent(new LockLostEvent(lease, reason, (holder != null) ? holder.getName() : "none")),
				properties.isReleaseAfterCommit(), LockObserver.composite(observers.orderedStream().toList()),
				handover(properties.getHandover()));
	}

	/**
	 * The asynchronous template over the lock template, when that is the library's own:
	 * the same locks, defaults, observers and loss events.
	 */
	@Bean
	@ConditionalOnMissingBean(AsyncLockTemplate.class)
	@ConditionalOnBean(DefaultLockTemplate.class)
	DefaultAsyncLockTemplate distributedAsyncLockTemplate(DefaultLockTemplate distributedLockTemplate) {
		return new DefaultAsyncLockTemplate(distributedLockTemplate);
	}

	/** The hand-over settings, or a startup failure naming the property at fault. */
	static HandoverSettings handover(DistributedLockProperties.Handover handover) {
		if (handover.getMaxPasses() < 0 || handover.getMaxPasses() > HandoverSettings.MAX_PASSES_LIMIT) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.handover.max-passes",
					handover.getMaxPasses(),
					"The value must be between 0 and " + HandoverSettings.MAX_PASSES_LIMIT + ".");
		}
		LockOptionsResolver.check("distributed-lock.handover.max-time", handover.getMaxTime(),
				handover.getMaxTime() == null || handover.getMaxTime().isNegative() || handover.getMaxTime().isZero(),
				"must be positive");
		return new HandoverSettings(handover.isEnabled(), handover.getMaxPasses(), handover.getMaxTime());
	}

	@Bean
	@ConditionalOnBean(LockTemplate.class)
	static ReleaseOnShutdown distributedLockReleaseOnShutdown(LockTemplate lockTemplate) {
		return new ReleaseOnShutdown(lockTemplate);
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
	@ImportRuntimeHints(DistributedLockRuntimeHints.class)
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
							+ " configure a store (Redis: spring.data.redis.*; or distributed-lock.store=in-memory for"
							+ " this JVM only) or define a LockProvider bean");
				}
				return available;
			}, beanFactory, order, allowTypes, (lockOptions) -> {
				LockProvider store = provider.getIfUnique();
				return (store != null) ? Capabilities.refusal(lockOptions, store).orElse(null) : null;
			}, () -> {
				LockProvider store = provider.getIfUnique();
				return (store != null) ? Capabilities.refusal(store, LockKind.MULTI).orElse(null) : null;
			});
		}

	}

}
