package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.distlock.contract.AbstractReadWriteLockContractTests;
import dev.distlock.contract.Conditions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read-write lock contract on a Redis Cluster of three masters: a key's lock, its
 * slot's fencing counter and its writers' intents share a slot, so each script (the
 * mutex's block-reserving acquire recording a writer's intent among them) runs on one
 * master, and waiters are woken through the cluster's pub/sub.
 */
@Tag("server")
class RedisClusterReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static RedisClusterPair pair;

	/**
	 * The providers' signal mode is decided first (sharded, on Redis 7 masters): a waiter
	 * that started listening before the mode was decided polls with a short backoff until
	 * its slot's sharded subscription is up, and such a writer's second attempt would
	 * hide whether its first one held readers back.
	 */
	@BeforeAll
	static void startCluster() {
		pair = new RedisClusterPair();
		for (RedisLockProvider provider : List.of(pair.provider, pair.otherProvider)) {
			LockAttempt attempt = LockAttempt.join(provider
				.tryLock(LockRequest.exclusive("signal-mode-" + UUID.randomUUID(), Duration.ofSeconds(30))));
			assertThat(((LockAttempt.Acquired) attempt).handle().release()).isTrue();
		}
		Conditions.await("the signal mode to be decided", Duration.ofSeconds(30),
				() -> pair.provider.isShardedPubSub() && pair.otherProvider.isShardedPubSub());
	}

	@AfterAll
	static void stopCluster() {
		pair.close();
	}

	@Override
	protected LockProvider provider() {
		return pair.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return pair.otherProvider;
	}

}
