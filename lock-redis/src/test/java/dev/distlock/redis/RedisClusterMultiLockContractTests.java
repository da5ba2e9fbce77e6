package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.distlock.contract.AbstractMultiLockContractTests;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The multi-key contract on a Redis Cluster of three masters, with each test's keys
 * spread over slots (and so over masters), except two that share a hash tag: the per-slot
 * steps, their order and their undoing are what this run checks.
 */
@Tag("server")
class RedisClusterMultiLockContractTests extends AbstractMultiLockContractTests {

	private static RedisClusterPair pair;

	private static RedisLockProvider provider;

	private static RedisLockProvider otherProvider;

	@BeforeAll
	static void startCluster() {
		pair = new RedisClusterPair();
		provider = pair.provider;
		otherProvider = pair.otherProvider;
	}

	@AfterAll
	static void stopCluster() {
		pair.close();
	}

	@Override
	protected LockProvider provider() {
		return provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return otherProvider;
	}

	/**
	 * An attempt made by an interrupted caller gives back what it took before it returns,
	 * whether the interrupt cut the wait for an acquire's reply or for a give-back's: the
	 * caller is told none of the keys is held.
	 */
	@Test
	void anInterruptedAttemptReturnsOnlyOnceItsKeysAreGivenBack() throws Exception {
		for (int round = 0; round < 200; round++) {
			String early;
			String late;
			do {
				early = "slot-" + UUID.randomUUID();
				late = "slot-" + UUID.randomUUID();
			}
			while (RedisKeys.slotOf(TestRedis.PREFIX + early) >= RedisKeys.slotOf(TestRedis.PREFIX + late));
			LockAttempt held = LockAttempt
				.join(otherProvider.tryLock(LockRequest.exclusive(late, Duration.ofSeconds(30))));
			assertThat(held).isInstanceOf(LockAttempt.Acquired.class);
			List<String> keys = List.of(early, late).stream().sorted().toList();
			Thread.currentThread().interrupt();
			try {
				LockAttempt.join(provider.tryLock(LockRequest.all(keys, Duration.ofSeconds(30))));
			}
			catch (RuntimeException ex) {
				// the interrupt, reported
			}
			finally {
				Thread.interrupted();
			}
			LockAttempt free = LockAttempt
				.join(otherProvider.tryLock(LockRequest.exclusive(early, Duration.ofSeconds(30))));
			assertThat(free).as("round %d: the key in the earlier slot", round)
				.isInstanceOf(LockAttempt.Acquired.class);
			((LockAttempt.Acquired) free).handle().release();
			((LockAttempt.Acquired) held).handle().release();
		}
	}

	/**
	 * A busy key in a later slot: the slot taken before it is given back before the
	 * attempt returns.
	 */
	@Test
	void aBusySlotGivesBackTheSlotsTakenBefore() {
		String early;
		String late;
		do {
			early = "slot-" + UUID.randomUUID();
			late = "slot-" + UUID.randomUUID();
		}
		while (RedisKeys.slotOf(TestRedis.PREFIX + early) >= RedisKeys.slotOf(TestRedis.PREFIX + late));
		LockAttempt held = LockAttempt.join(otherProvider.tryLock(LockRequest.exclusive(late, Duration.ofSeconds(30))));
		assertThat(held).isInstanceOf(LockAttempt.Acquired.class);
		LockAttempt attempt = LockAttempt.join(provider
			.tryLock(LockRequest.all(List.of(early, late).stream().sorted().toList(), Duration.ofSeconds(30))));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) attempt).key()).isEqualTo(late);
		LockAttempt free = LockAttempt
			.join(otherProvider.tryLock(LockRequest.exclusive(early, Duration.ofSeconds(30))));
		assertThat(free).as("the key in the earlier slot").isInstanceOf(LockAttempt.Acquired.class);
		((LockAttempt.Acquired) free).handle().release();
		((LockAttempt.Acquired) held).handle().release();
	}

	/** Keys in different slots, the last two sharing one (a hash tag). */
	@Override
	protected List<String> keys(int count) {
		String id = UUID.randomUUID().toString();
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add((i >= 1 && i == count - 1) ? "multi-" + (char) ('a' + i) + "-{" + id + "-shared}"
					: "multi-" + (char) ('a' + i) + "-" + id);
		}
		if (count >= 3) {
			keys.set(count - 2, "multi-" + (char) ('a' + count - 2) + "-{" + id + "-shared}");
		}
		return keys;
	}

}
