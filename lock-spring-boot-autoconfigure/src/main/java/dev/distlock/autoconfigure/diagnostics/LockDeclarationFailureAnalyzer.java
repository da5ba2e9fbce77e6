package dev.distlock.autoconfigure.diagnostics;

import java.util.Map;
import java.util.Set;

import dev.distlock.aop.LockDeclarationException;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * A {@code @DistributedLock} method that cannot be locked as declared: a {@code name}
 * with no option set, a kind of lock the store does not offer, or an invalid annotation.
 * The description names the method; the action says what to change.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class LockDeclarationFailureAnalyzer extends AbstractFailureAnalyzer<LockDeclarationException> {

	private final Environment environment;

	LockDeclarationFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, LockDeclarationException cause) {
		return new FailureAnalysis(cause.getMessage(), action(cause), cause);
	}

	private String action(LockDeclarationException cause) {
		String annotation = "@DistributedLock on " + cause.method();
		return switch (cause.reason()) {
			case UNKNOWN_OPTION_SET -> "Configure the option set under distributed-lock.locks." + cause.optionSet()
					+ " (for example distributed-lock.locks." + cause.optionSet() + ".wait-time=2s), or correct the"
					+ " name on " + annotation + ". Option sets configured: " + optionSets() + ".";
			case UNSUPPORTED_BY_STORE -> "Lock in a store that offers it (read locks and semaphores: redis,"
					+ " zookeeper, in-memory; multi-key locks: redis, in-memory; fair locks: redis, zookeeper,"
					+ " in-memory), chosen with distributed-lock.store, or change " + annotation
					+ " so that it does not need it.";
			case INVALID -> "Correct " + annotation + " as the description says.";
		};
	}

	private String optionSets() {
		Set<String> names = Binder.get(this.environment)
			.bind("distributed-lock.locks", Bindable.mapOf(String.class, Object.class))
			.map(Map::keySet)
			.orElse(Set.of());
		return names.isEmpty() ? "none" : String.join(", ", names);
	}

}
