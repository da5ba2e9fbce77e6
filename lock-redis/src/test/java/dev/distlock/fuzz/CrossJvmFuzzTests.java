package dev.distlock.fuzz;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.redis.RedisStoreFixture;
import org.junit.jupiter.api.Tag;

/**
 * Mutual exclusion under contention on Redis: threads of two templates in this JVM and of
 * a second JVM do read-pause-write increments of one Redis value under one lock; see
 * {@link AbstractCrossJvmFuzzTests}.
 */
@Tag("server")
class CrossJvmFuzzTests extends AbstractCrossJvmFuzzTests {

	@Override
	protected StoreFixture startStore() {
		return new RedisStoreFixture();
	}

}
