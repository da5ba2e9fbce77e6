package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.distlock.contract.AbstractMultiLockContractTests;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.TokenBlock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** The MultiLock contract on a real {@code redis-server}, two providers as two JVMs. */
@Tag("server")
class RedisMultiLockContractTests extends AbstractMultiLockContractTests {

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

	/**
	 * A multi-key lease released in one call tells, per key, whether a waiter of another
	 * JVM had marked it, as a plain lock's release does, so that this JVM's waiters let
	 * that waiter go first.
	 */
	@Test
	void aReleaseOfSeveralKeysTellsWhichOneAWaiterMarked() {
		String id = UUID.randomUUID().toString();
		List<String> keys = List.of("marked-a-" + id, "marked-b-" + id);
		Duration lease = Duration.ofSeconds(30);
		List<LockHandle> handles = ((LockAttempt.AcquiredAll) LockAttempt
			.join(pair.provider.tryLock(LockRequest.all(keys, lease)))).handles();
		assertThat(LockAttempt
			.join(pair.otherProvider.tryLock(LockRequest.exclusive(keys.get(1), lease).withWaiting(true))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(pair.provider.releaseAll(handles)).containsExactly(true, true);
		assertThat(handles).extracting((handle) -> ((TokenBlock) handle).releasedToWaiters())
			.containsExactly(false, true);
	}

}
