package dev.distlock.redis;

import org.junit.jupiter.api.BeforeAll;

/** The provider contract on RedLock over five masters. */
class RedLockFiveMastersContractTests extends AbstractRedLockContractTests {

	@BeforeAll
	static void masters() {
		start(5);
	}

}
