package dev.distlock.autoconfigure.diagnostics;

import dev.distlock.autoconfigure.LockStoreSelectionException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * A {@code distributed-lock.*} property has a value distlock refuses (a negative wait, a
 * zero lease, an empty key prefix...): names the property, its value, where the value
 * came from, and the rule.
 */
@Order(Ordered.HIGHEST_PRECEDENCE)
class InvalidLockPropertyFailureAnalyzer extends AbstractFailureAnalyzer<InvalidConfigurationPropertyValueException> {

	private final Environment environment;

	InvalidLockPropertyFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure,
			InvalidConfigurationPropertyValueException cause) {
		if (!cause.getName().startsWith("distributed-lock.") || cause instanceof LockStoreSelectionException) {
			return null;
		}
		String reason = (cause.getReason() != null) ? cause.getReason() : "The value is not valid.";
		return new FailureAnalysis(
				"Invalid value '" + cause.getValue() + "' for the distlock property '" + cause.getName() + "'"
						+ origin(cause.getName()) + ": " + reason,
				"Change " + cause.getName() + " so that it follows the rule above; every distributed-lock property,"
						+ " its default and its rules are in distlock's configuration reference.",
				cause);
	}

	private String origin(String name) {
		if (!ConfigurationPropertyName.isValid(name)) {
			return "";
		}
		ConfigurationPropertyName property = ConfigurationPropertyName.of(name);
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(this.environment)) {
			ConfigurationProperty found = source.getConfigurationProperty(property);
			if (found != null && found.getOrigin() != null) {
				return " (from " + found.getOrigin() + ")";
			}
		}
		return "";
	}

}
