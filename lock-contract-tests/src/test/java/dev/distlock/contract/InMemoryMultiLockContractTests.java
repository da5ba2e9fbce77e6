package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/**
 * The MultiLock contract on the in-memory store; both "JVMs" share one store instance.
 */
class InMemoryMultiLockContractTests extends AbstractMultiLockContractTests {

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
