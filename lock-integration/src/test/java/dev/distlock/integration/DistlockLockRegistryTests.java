package dev.distlock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DistlockLockRegistry} on a real {@code redis-server}: two registries, each over
 * its own connection, store client and template, stand for two application instances.
 * Spring Integration's own {@link LockRegistryLeaderInitiator} elects a leader across
 * them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class DistlockLockRegistryTests {

	private static final long HEART_BEAT_MILLIS = 200;

	private static RedisServer server;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		server.close();
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	/** One application instance: its own connection, store client, scheduler. */
	private DistlockLockRegistry instance() {
		return instance(LockOptions.defaults());
	}

	/** One application instance whose registry's locks use {@code options}. */
	private DistlockLockRegistry instance(LockOptions options) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		this.closeables.add(factory::destroy);
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		RedisLockProvider store = new RedisLockProvider(factory, "lock:", false);
		// A cold connection on a loaded machine can take longer than one store timeout.
		Conditions.await("Redis answers", Duration.ofSeconds(30), () -> {
			try {
				LockAttempt
					.join(store.tryLock(LockRequest.exclusive("warm-up-" + UUID.randomUUID(), Duration.ofMillis(1))));
				return true;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
		DefaultLockTemplate template = new DefaultLockTemplate(store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		return new DistlockLockRegistry(template, options, "");
	}

	@Test
	void oneLeaderAtATimeAcrossTwoInstancesAndTheOtherTakesOverWhenItStops() {
		String role = "leader-" + UUID.randomUUID();
		List<String> events = new CopyOnWriteArrayList<>();
		LockRegistryLeaderInitiator first = initiator(instance(), "first", role, events);
		LockRegistryLeaderInitiator second = initiator(instance(), "second", role, events);
		first.start();
		second.start();
		Conditions.await("a leader is elected", Duration.ofSeconds(20), () -> !events.isEmpty());
		// Over ten heartbeats, every one of which re-locks the leader's lock: one leader.
		long end = System.nanoTime() + Duration.ofMillis(HEART_BEAT_MILLIS * 10).toNanos();
		while (System.nanoTime() - end < 0) {
			assertThat(first.getContext().isLeader() && second.getContext().isLeader()).as("two leaders").isFalse();
			LockSupport.parkNanos(Duration.ofMillis(HEART_BEAT_MILLIS / 4).toNanos());
		}
		String leader = events.get(0).substring("granted ".length());
		LockRegistryLeaderInitiator leading = leader.equals("first") ? first : second;
		String follower = leader.equals("first") ? "second" : "first";
		assertThat(events).containsExactly("granted " + leader);
		leading.stop();
		Conditions.await(follower + " takes over", Duration.ofSeconds(20),
				() -> events.contains("granted " + follower));
		Conditions.await(leader + " is told", Duration.ofSeconds(20), () -> events.contains("revoked " + leader));
		(leading == first ? second : first).stop();
	}

	@Test
	void aLeaderWhoseLeaseIsLostIsRevoked() {
		List<String> events = new CopyOnWriteArrayList<>();
		LockRegistryLeaderInitiator initiator = initiator(
				instance(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).autoRenew(false).build()), "short",
				"leader-" + UUID.randomUUID(), events);
		initiator.start();
		Conditions.await("leader", Duration.ofSeconds(20), () -> events.contains("granted short"));
		Conditions.await("leadership revoked once the lease is lost", Duration.ofSeconds(20),
				() -> events.contains("revoked short"));
		initiator.stop();
	}

	@Test
	void locksOfTwoInstancesExcludeEachOtherAndExecuteLockedRunsUnderTheLock() throws Exception {
		DistlockLockRegistry one = instance();
		DistlockLockRegistry two = instance();
		RegistryLock held = one.obtain("registry-exclusion");
		held.lock();
		try {
			assertThat(held.lease()).isPresent();
			assertThat(CompletableFuture.supplyAsync(() -> two.obtain("registry-exclusion").tryLock(), TestThreads.EACH)
				.get(10, TimeUnit.SECONDS)).isFalse();
		}
		finally {
			held.unlock();
		}
		List<Long> tokens = new ArrayList<>();
		RegistryLock lock = two.obtain("registry-exclusion");
		two.executeLocked("registry-exclusion", () -> tokens.add(1L));
		assertThat(tokens).hasSize(1);
		assertThat(lock.tryLock(Duration.ofSeconds(1), Duration.ofSeconds(10))).isTrue();
		lock.unlock();
	}

	@Test
	void rejectsKeysThatAreNotStringsAndUnsupportedUse() {
		DistlockLockRegistry registry = instance();
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> registry.obtain(42))
			.withMessageContaining("java.lang.Integer");
		RegistryLock lock = registry.obtain("registry-unsupported");
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(lock::newCondition);
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock);
	}

	private LockRegistryLeaderInitiator initiator(DistlockLockRegistry registry, String id, String role,
			List<String> events) {
		LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
				new DefaultCandidate(id, role) {

					@Override
					public void onGranted(Context context) {
						events.add("granted " + id);
					}

					@Override
					public void onRevoked(Context context) {
						events.add("revoked " + id);
					}

				});
		initiator.setHeartBeatMillis(HEART_BEAT_MILLIS);
		initiator.setBusyWaitMillis(50);
		this.closeables.add(initiator::destroy);
		return initiator;
	}

}
