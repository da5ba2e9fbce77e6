package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/** The reactive contract on the in-memory store. */
class InMemoryReactiveLockContractTests extends AbstractReactiveLockContractTests {

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
