package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/** The semaphore contract on the in-memory store. */
class InMemorySemaphoreContractTests extends AbstractSemaphoreContractTests {

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
