package dev.distlock.autoconfigure.diagnostics;

import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * A bean of distlock's (the {@code LockTemplate}, a {@code LockProvider}...) is required
 * and there is none because no store is in use: names {@code distributed-lock.store}, its
 * allowed values and the stores on the class path, where Boot's own analysis would say
 * only that the bean could not be found.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class LockStoreFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException> {

	/** The packages of the beans a store brings: the template, the provider. */
	private static final Set<String> LOCK_PACKAGES = Set.of("dev.distlock", "dev.distlock.spi", "dev.distlock.support");

	private final LockStores stores;

	LockStoreFailureAnalyzer(Environment environment) {
		this.stores = new LockStores(environment, LockStoreFailureAnalyzer.class.getClassLoader());
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		Class<?> type = cause.getBeanType();
		if (type == null || !LOCK_PACKAGES.contains(type.getPackageName())) {
			return null;
		}
		return new FailureAnalysis(
				"A component required a bean of type '" + type.getName()
						+ "', but there is none because no lock store is in use: " + this.stores.whyNone() + ".",
				this.stores.action(), cause);
	}

}
