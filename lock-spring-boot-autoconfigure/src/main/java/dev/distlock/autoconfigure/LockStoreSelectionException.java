package dev.distlock.autoconfigure;

import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * The choice of store cannot be made: {@code distributed-lock.store} names no store, or a
 * store that is not available, or is not set while several stores are available.
 */
public class LockStoreSelectionException extends InvalidConfigurationPropertyValueException {

	private static final long serialVersionUID = 1L;

	private final @Nullable String chosen;

	private final List<String> available;

	LockStoreSelectionException(@Nullable String chosen, List<String> available, String reason) {
		super(OnLockStoreCondition.PROPERTY, (chosen != null) ? chosen : "(not set)", reason);
		this.chosen = chosen;
		this.available = List.copyOf(available);
	}

	/** The value of {@code distributed-lock.store}, or null if it is not set. */
	public @Nullable String chosen() {
		return this.chosen;
	}

	/** The stores available to this application (library and connection present). */
	public List<String> available() {
		return this.available;
	}

}
