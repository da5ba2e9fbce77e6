package dev.distlock.redis;

import org.junit.jupiter.api.BeforeAll;

/** The provider contract on RedLock over three masters. */
class RedLockThreeMastersContractTests extends AbstractRedLockContractTests {

	@BeforeAll
	static void masters() {
		start(3);
	}

}
