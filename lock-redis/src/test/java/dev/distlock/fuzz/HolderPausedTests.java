package dev.distlock.fuzz;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractHolderPausedTests;
import dev.distlock.redis.RedisStoreFixture;
import org.junit.jupiter.api.Tag;

/**
 * A Redis lock's holder JVM stopped with {@code SIGSTOP} for twice its lease is fenced
 * off and learns of the loss within one renewal interval of resuming; see
 * {@link AbstractHolderPausedTests}.
 */
@Tag("server")
class HolderPausedTests extends AbstractHolderPausedTests {

	@Override
	protected StoreFixture startStore() {
		return new RedisStoreFixture();
	}

}
