package dev.distlock.redis;

import dev.distlock.spi.LockProvider;
import dev.distlock.testsupport.AbstractSegmentedLockContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SegmentedLock contract on a real {@code redis-server}, two providers as two JVMs.
 */
class RedisSegmentedLockContractTests extends AbstractSegmentedLockContractTests {

	private static RedisProviderPair redis;

	@BeforeAll
	static void connect() {
		redis = new RedisProviderPair();
	}

	@AfterAll
	static void disconnect() {
		redis.close();
	}

	@Override
	protected LockProvider provider() {
		return redis.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return redis.otherProvider;
	}

}
