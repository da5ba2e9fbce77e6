package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/** The read-write lock contract on the in-memory store. */
class InMemoryReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

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
