package dev.distlock.autoconfigure;

import java.util.List;
import java.util.Set;

import dev.distlock.spi.LockProvider;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.env.Environment;

/**
 * Checks the choice of store once every bean exists, as Spring Boot does for caches: with
 * one store available it is used; with several, {@code distributed-lock.store} must name
 * one; a store it names must be available.
 */
final class StoreSelectionCheck implements SmartInitializingSingleton {

	/** Every store name {@code distributed-lock.store} accepts. */
	static final Set<String> KNOWN = Set.copyOf(LockStoreCandidate.NAMES);

	private final ObjectProvider<LockStoreCandidate> candidates;

	private final ObjectProvider<LockProvider> providers;

	private final Environment environment;

	StoreSelectionCheck(ObjectProvider<LockStoreCandidate> candidates, ObjectProvider<LockProvider> providers,
			Environment environment) {
		this.candidates = candidates;
		this.providers = providers;
		this.environment = environment;
	}

	@Override
	public void afterSingletonsInstantiated() {
		String chosen = this.environment.getProperty(OnLockStoreCondition.PROPERTY);
		List<String> available = this.candidates.orderedStream().map(LockStoreCandidate::name).sorted().toList();
		if (chosen == null || chosen.isBlank()) {
			if (available.size() > 1) {
				throw new LockStoreSelectionException(null, available,
						"Several lock stores are available (" + String.join(", ", available) + "): set "
								+ OnLockStoreCondition.PROPERTY + " to the one to lock in.");
			}
			return;
		}
		String store = chosen.trim().toLowerCase(java.util.Locale.ROOT);
		if (!KNOWN.contains(store)) {
			throw new LockStoreSelectionException(chosen, available,
					"The value must be one of " + String.join(", ", LockStoreCandidate.NAMES) + ".");
		}
		if (!available.contains(store) && this.providers.getIfAvailable() == null) {
			throw new LockStoreSelectionException(chosen, available, "The " + store
					+ " store is not available: put its module on the class path and configure its" + " connection.");
		}
	}

}
