package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/** The Latch contract on the in-memory store; both "JVMs" share one store instance. */
class InMemoryLatchContractTests extends AbstractLatchContractTests {

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
