package dev.distlock.redis;

import dev.distlock.contract.AbstractReactiveLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The reactive contract on RedLock over three real masters: the reactive template runs on
 * the same core as the blocking one, whatever the store.
 */
@Tag("server")
class RedLockReactiveLockContractTests extends AbstractReactiveLockContractTests {

	private static RedLockMasters masters;

	private static RedLockProvider provider;

	private static RedLockProvider otherProvider;

	@BeforeAll
	static void start() {
		masters = RedLockMasters.start(3);
		provider = masters.provider();
		otherProvider = masters.provider();
	}

	@AfterAll
	static void stop() {
		masters.close();
	}

	@Override
	protected LockProvider provider() {
		return provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return otherProvider;
	}

}
