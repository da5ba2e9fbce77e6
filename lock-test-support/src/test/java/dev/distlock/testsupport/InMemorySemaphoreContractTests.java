package dev.distlock.testsupport;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.PermitLocking;

/** The semaphore contract on the in-memory store. */
class InMemorySemaphoreContractTests extends AbstractSemaphoreContractTests {

	private static final InMemoryLockProvider provider = new InMemoryLockProvider();

	@Override
	protected PermitLocking provider() {
		return provider;
	}

	@Override
	protected PermitLocking otherProvider() {
		return provider;
	}

}
