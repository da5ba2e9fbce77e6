package dev.distlock.redis;

import dev.distlock.contract.AbstractSegmentedLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The SegmentedLock contract on a real {@code redis-server}, two providers as two JVMs.
 */
@Tag("server")
class RedisSegmentedLockContractTests extends AbstractSegmentedLockContractTests {

	@RegisterExtension
	static final RedisProviderPair pair = new RedisProviderPair();

	@Override
	protected LockProvider provider() {
		return pair.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return pair.otherProvider;
	}

}
