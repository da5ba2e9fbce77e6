package dev.distlock.config;

import dev.distlock.TransactionLocks;
import dev.distlock.aop.TransactionLockAdvisor;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.DeferredImportSelector;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.Role;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.core.type.AnnotationMetadata;

/**
 * What {@link EnableDistributedLocks} imports last: the {@code @TransactionLock} advisor.
 * It has {@code @Transactional}'s default order, and advisors of one order apply in the
 * order they were registered, so it is registered after every other configuration class
 * ({@link Selector}, as Spring Boot registers its auto-configurations): after the
 * transaction advisor, whichever annotation the application declared first, so that the
 * lock is taken inside the transaction. An advisor already registered (by the Spring Boot
 * auto-configuration, which a Boot application that also declares the annotation gets
 * first) is kept instead, so that no method takes its lock twice.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
class TransactionLockConfiguration implements ImportAware {

	private boolean allowTypeReferences;

	@Override
	public void setImportMetadata(AnnotationMetadata importMetadata) {
		AnnotationAttributes enable = AnnotationAttributes
			.fromMap(importMetadata.getAnnotationAttributes(EnableDistributedLocks.class.getName()));
		this.allowTypeReferences = (enable != null) && enable.getBoolean("allowTypeReferencesInKeys");
	}

	/**
	 * The transaction locks are looked up at the first call, so nothing is created early.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@Conditional(NoAdvisorYet.class)
	TransactionLockAdvisor distributedLockTransactionLockAdvisor(ObjectProvider<TransactionLocks> locks,
			ConfigurableListableBeanFactory beanFactory) {
		return new TransactionLockAdvisor(() -> {
			TransactionLocks available = locks.getIfAvailable();
			if (available == null) {
				throw new IllegalStateException("@TransactionLock needs a TransactionLocks bean, and there is none:"
						+ " define one, for example a JdbcTransactionLocks over the DataSource of the transactions");
			}
			return available;
		}, beanFactory, this.allowTypeReferences);
	}

	static class NoAdvisorYet implements Condition {

		@Override
		public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
			ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
			return beanFactory == null
					|| beanFactory.getBeanNamesForType(TransactionLockAdvisor.class, true, false).length == 0;
		}

	}

	/**
	 * Imports {@link TransactionLockConfiguration} once the other configuration is in,
	 * Spring Boot's auto-configurations included (they come just before the lowest
	 * precedence).
	 */
	static class Selector implements DeferredImportSelector, Ordered {

		@Override
		public String[] selectImports(AnnotationMetadata importingClassMetadata) {
			return new String[] { TransactionLockConfiguration.class.getName() };
		}

		@Override
		public @Nullable Class<? extends Group> getImportGroup() {
			return null;
		}

		@Override
		public int getOrder() {
			return Ordered.LOWEST_PRECEDENCE;
		}

	}

}
