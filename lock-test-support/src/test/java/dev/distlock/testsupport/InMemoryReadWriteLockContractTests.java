package dev.distlock.testsupport;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.SharedLocking;

/** The read-write lock contract on the in-memory store. */
class InMemoryReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static final InMemoryLockProvider provider = new InMemoryLockProvider();

	@Override
	protected SharedLocking provider() {
		return provider;
	}

	@Override
	protected SharedLocking otherProvider() {
		return provider;
	}

}
