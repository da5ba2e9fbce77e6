package dev.distlock.integration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.LockOptions;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.Conditions;
import dev.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
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
class DistlockLockRegistryTests {

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
		DefaultLockTemplate template = new DefaultLockTemplate(new RedisLockProvider(factory, "lock:", false),
				scheduler,
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
		AtomicInteger leaders = new AtomicInteger();
		List<String> events = new CopyOnWriteArrayList<>();
		List<Integer> concurrentLeaders = new CopyOnWriteArrayList<>();
		LockRegistryLeaderInitiator first = initiator(instance(), "first", leaders, concurrentLeaders, events);
		LockRegistryLeaderInitiator second = initiator(instance(), "second", leaders, concurrentLeaders, events);
		first.start();
		second.start();
		Conditions.await("a leader is elected", Duration.ofSeconds(20), () -> leaders.get() == 1);
		String leader = events.get(0).substring("granted ".length());
		LockRegistryLeaderInitiator leading = leader.equals("first") ? first : second;
		String follower = leader.equals("first") ? "second" : "first";
		assertThat(leading.getContext().isLeader()).isTrue();
		leading.stop();
		Conditions.await(follower + " takes over", Duration.ofSeconds(20),
				() -> events.contains("granted " + follower));
		assertThat(events).containsSubsequence("granted " + leader, "revoked " + leader, "granted " + follower);
		assertThat(concurrentLeaders).as("leaders at once, after each grant").containsOnly(1);
		(leading == first ? second : first).stop();
	}

	@Test
	void aLeaderWhoseLeaseIsLostIsRevoked() {
		AtomicInteger leaders = new AtomicInteger();
		List<String> events = new CopyOnWriteArrayList<>();
		LockRegistryLeaderInitiator initiator = initiator(
				instance(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).autoRenew(false).build()), "short",
				leaders, new CopyOnWriteArrayList<>(), events);
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
			assertThat(CompletableFuture.supplyAsync(() -> two.obtain("registry-exclusion").tryLock())
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

	private LockRegistryLeaderInitiator initiator(DistlockLockRegistry registry, String id, AtomicInteger leaders,
			List<Integer> concurrentLeaders, List<String> events) {
		LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry,
				new DefaultCandidate(id, "distlock-leader") {

					@Override
					public void onGranted(Context context) {
						events.add("granted " + id);
						concurrentLeaders.add(leaders.incrementAndGet());
					}

					@Override
					public void onRevoked(Context context) {
						leaders.decrementAndGet();
						events.add("revoked " + id);
					}

				});
		initiator.setHeartBeatMillis(200);
		initiator.setBusyWaitMillis(50);
		this.closeables.add(initiator::destroy);
		return initiator;
	}

}
