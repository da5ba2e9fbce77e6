package dev.distlock.redis;

import dev.distlock.contract.AbstractReactiveLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reactive contract on a real {@code redis-server}; the two providers use separate
 * connection factories, as two JVMs would.
 */
@Tag("server")
class RedisReactiveLockContractTests extends AbstractReactiveLockContractTests {

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
