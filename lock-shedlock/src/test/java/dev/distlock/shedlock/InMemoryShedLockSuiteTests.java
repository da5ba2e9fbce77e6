package dev.distlock.shedlock;

import java.time.Duration;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShedLock's own published suites against the bridge on the in-memory store. A lock is
 * there when a probe attempt on the store finds it busy (a probe that gets it releases it
 * at once).
 */
@Tag("slow")
class InMemoryShedLockSuiteTests extends AbstractExtensibleLockProviderIntegrationTest {

	private static final InMemoryLockProvider store = new InMemoryLockProvider();

	private static final DistlockShedLockProvider provider = new DistlockShedLockProvider(store);

	@Override
	protected ExtensibleLockProvider getLockProvider() {
		return provider;
	}

	@Override
	protected void assertUnlocked(String lockName) {
		assertThat(isLocked(lockName)).as("lock %s held in the store", lockName).isFalse();
	}

	@Override
	protected void assertLocked(String lockName) {
		assertThat(isLocked(lockName)).as("lock %s held in the store", lockName).isTrue();
	}

	static boolean isLocked(InMemoryLockProvider store, String key) {
		LockAttempt probe = LockAttempt.join(store.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(1))));
		if (probe instanceof LockAttempt.Acquired acquired) {
			acquired.handle().release();
			return false;
		}
		return true;
	}

	private static boolean isLocked(String key) {
		return isLocked(store, key);
	}

}
