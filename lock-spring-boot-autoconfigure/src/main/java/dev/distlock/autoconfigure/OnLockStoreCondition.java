package dev.distlock.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** See {@link ConditionalOnLockStore}. */
class OnLockStoreCondition extends SpringBootCondition {

	static final String PROPERTY = "distributed-lock.store";

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> attributes = metadata.getAnnotationAttributes(ConditionalOnLockStore.class.getName());
		String store = (String) attributes.get("value");
		boolean byDefault = (Boolean) attributes.get("byDefault");
		String chosen = context.getEnvironment().getProperty(PROPERTY);
		if (chosen == null || chosen.isBlank()) {
			return byDefault ? ConditionOutcome.match(PROPERTY + " is not set; " + store + " may be used")
					: ConditionOutcome.noMatch(PROPERTY + " is not set, and " + store + " is used only when named");
		}
		return chosen.trim().equalsIgnoreCase(store) ? ConditionOutcome.match(PROPERTY + " is " + store)
				: ConditionOutcome.noMatch(PROPERTY + " is " + chosen + ", not " + store);
	}

}
