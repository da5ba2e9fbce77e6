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
		StringBuilder description = new StringBuilder(
				"The lock store cannot be chosen: " + LockStores.PROPERTY + " " + setting + ". ");
		// A store registers as available only when the property names it or nothing, so
		// the
		// list says something only when the property is not set.
		if (cause.chosen() == null) {
			description.append("Stores available to this application: ")
				.append(String.join(", ", cause.available()))
				.append(". ");
		}
		return new FailureAnalysis(description.append(cause.getReason()).toString(), this.stores.action(), cause);
	}

}
