package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/**
 * The provider contract on the in-memory store. Its store is the provider instance, so
 * the "other JVM" is the same instance: owners are per attempt, not per provider, and
 * that is what the suite checks.
 */
class InMemoryLockProviderContractTests extends AbstractLockProviderContractTests {

	private static final InMemoryLockProvider provider = new InMemoryLockProvider();

	@Override
	protected LockProvider provider() {
		return provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return provider;
	}

}
