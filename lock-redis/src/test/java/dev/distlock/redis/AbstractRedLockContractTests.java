package dev.distlock.redis;

import dev.distlock.contract.AbstractLockProviderContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

/**
 * The published provider contract, run by RedLock over N real masters, with two providers
 * on connections of their own, as two JVMs would have.
 */
@Tag("server")
abstract class AbstractRedLockContractTests extends AbstractLockProviderContractTests {

	private static RedLockMasters masters;

	private static RedLockProvider provider;

	private static RedLockProvider otherProvider;

	static void start(int count) {
		masters = RedLockMasters.start(count);
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
