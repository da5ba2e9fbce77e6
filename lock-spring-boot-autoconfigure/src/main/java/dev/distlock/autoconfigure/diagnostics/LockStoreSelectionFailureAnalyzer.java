package dev.distlock.autoconfigure.diagnostics;

import dev.distlock.autoconfigure.LockStoreSelectionException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * {@code distributed-lock.store} names no store, or one that is not available, or is not
 * set while several stores are available.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class LockStoreSelectionFailureAnalyzer extends AbstractFailureAnalyzer<LockStoreSelectionException> {

	private final LockStores stores;

	LockStoreSelectionFailureAnalyzer(Environment environment) {
		this.stores = new LockStores(environment, LockStoreSelectionFailureAnalyzer.class.getClassLoader());
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LockStoreSelectionException cause) {
		String setting = (cause.chosen() != null) ? "is '" + cause.chosen() + "'" : "is not set";
		String available = cause.available().isEmpty() ? "none" : String.join(", ", cause.available());
		return new FailureAnalysis(
				"The lock store cannot be chosen: " + LockStores.PROPERTY + " " + setting
						+ ". Stores available to this application: " + available + ". " + cause.getReason(),
				this.stores.action(), cause);
	}

}
