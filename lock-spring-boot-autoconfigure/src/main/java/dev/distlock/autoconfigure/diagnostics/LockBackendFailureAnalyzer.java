package dev.distlock.autoconfigure.diagnostics;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockProvider;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * The lock store failed or could not be reached while the application was starting. The
 * starter itself starts without its store; a lock taken during startup (by a runner, an
 * initializer, a scheduled job firing at once) fails so.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class LockBackendFailureAnalyzer extends AbstractFailureAnalyzer<LockBackendException> {

	private final BeanFactory beanFactory;

	LockBackendFailureAnalyzer(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LockBackendException cause) {
		String store = store();
		return new FailureAnalysis(
				"The " + store + " lock store failed while the application was starting: " + cause.getMessage(),
				"Check that the " + store + " store is running and reachable with the application's settings ("
						+ settings(store) + "). distlock needs no store to start: the lock was taken during startup,"
						+ " so move it after startup or handle LockBackendException where it is taken.",
				cause);
	}

	private String store() {
		try {
			ObjectProvider<LockProvider> providers = this.beanFactory.getBeanProvider(LockProvider.class);
			LockProvider provider = providers.getIfUnique();
			return (provider != null) ? provider.storeName() : "configured";
		}
		catch (RuntimeException ex) {
			return "configured";
		}
	}

	private static String settings(String store) {
		return switch (store) {
			case "redis" -> "spring.data.redis.*";
			case "redlock" -> "distributed-lock.redis.redlock.nodes";
			case "jdbc" -> "spring.datasource.*";
			case "zookeeper" -> "distributed-lock.zookeeper.* or the application's CuratorFramework";
			default -> "its connection settings";
		};
	}

}
