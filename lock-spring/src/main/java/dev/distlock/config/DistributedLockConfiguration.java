package dev.distlock.config;

import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.aop.DistributedLockRuntimeHints;
import dev.distlock.aop.LockAutoProxyRegistrar;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportAware;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.annotation.AnnotationAttributes;
import org.springframework.core.type.AnnotationMetadata;

/**
 * What {@link EnableDistributedLocks} imports first: the lock advisor, with the
 * annotation's order, and an auto-proxy creator. The advisor is created while other beans
 * are being proxied, possibly early, so it depends on nothing eagerly: the template (and
 * the store, for the fair-lock check) are looked up on first use.
 */
@Configuration(proxyBeanMethods = false)
@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
@Import(LockAutoProxyRegistrar.class)
@ImportRuntimeHints(DistributedLockRuntimeHints.class)
class DistributedLockConfiguration implements ImportAware {

	private @Nullable AnnotationAttributes enableDistributedLocks;

	@Override
	public void setImportMetadata(AnnotationMetadata importMetadata) {
		this.enableDistributedLocks = AnnotationAttributes
			.fromMap(importMetadata.getAnnotationAttributes(EnableDistributedLocks.class.getName()));
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	DistributedLockAdvisor distributedLockAdvisor(ObjectProvider<LockTemplate> template,
			ObjectProvider<LockProvider> provider, ConfigurableListableBeanFactory beanFactory) {
		AnnotationAttributes enable = this.enableDistributedLocks;
		if (enable == null) {
			throw new IllegalStateException("Import " + DistributedLockConfiguration.class.getSimpleName()
					+ " through @" + EnableDistributedLocks.class.getSimpleName());
		}
		return new DistributedLockAdvisor(DistributedLockConfiguration::noNamedOptions, () -> {
			LockTemplate available = template.getIfAvailable();
			if (available == null) {
				throw new IllegalStateException("@DistributedLock needs a LockTemplate bean, and there is none:"
						+ " define one, for example a DefaultLockTemplate over a store's LockProvider");
			}
			return available;
		}, beanFactory, enable.getNumber("order"), enable.getBoolean("allowTypeReferencesInKeys"),
				(options) -> unsupported(options, provider.getIfUnique()), () -> {
					LockProvider store = provider.getIfUnique();
					return (store != null) ? Capabilities.refusal(store, LockKind.MULTI).orElse(null) : null;
				});
	}

	/**
	 * Named option sets are configuration properties, which only the Spring Boot
	 * auto-configuration reads; a name must not silently fall back to the defaults.
	 */
	private static @Nullable LockOptions noNamedOptions(String name) {
		throw new IllegalStateException("@DistributedLock(name = \"" + name + "\") selects the options under"
				+ " distributed-lock.locks." + name + ", which only the Spring Boot auto-configuration reads;"
				+ " with @EnableDistributedLocks set waitTime and leaseTime on the annotation instead");
	}

	/** Why the store cannot honour {@code options}, or null if it can or is unknown. */
	private static @Nullable String unsupported(LockOptions options, @Nullable LockProvider store) {
		return (store != null) ? Capabilities.refusal(options, store).orElse(null) : null;
	}

}
