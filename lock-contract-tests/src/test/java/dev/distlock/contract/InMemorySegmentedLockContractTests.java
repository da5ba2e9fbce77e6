package dev.distlock.contract;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;

/**
 * The SegmentedLock contract on the in-memory store; both "JVMs" share one store
 * instance.
 */
class InMemorySegmentedLockContractTests extends AbstractSegmentedLockContractTests {

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
