package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisCluster;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The same locks on a real three-master Redis Cluster: keys in every slot (each script
 * touches one slot: lock, fencing counter and fair queue share it), fencing tokens that
 * rise per key, batched renewal grouped by slot, fair queues, and a waiter woken by the
 * release through the cluster's pub/sub.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class ClusterTests {

	private static RedisCluster cluster;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(3);
		factory = connect();
		otherFactory = connect();
		redis = new StringRedisTemplate(factory);
	}

	private static LettuceConnectionFactory connect() {
		LettuceConnectionFactory created = new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster.addresses()));
		created.afterPropertiesSet();
		created.start();
		return created;
	}

	@AfterAll
	static void stopCluster() {
		factory.destroy();
		otherFactory.destroy();
		cluster.close();
	}

	@Test
	void locksOnKeysAllOverTheClusterAreExclusiveFencedAndRenewed() {
		try (RedisLockProvider provider = provider(factory);
				RedisLockProvider otherProvider = provider(otherFactory);
				RenewalScheduler scheduler = new RenewalScheduler();
				RenewalScheduler otherScheduler = new RenewalScheduler()) {
			DefaultLockTemplate template = template(provider, scheduler, Duration.ofMillis(100));
			DefaultLockTemplate other = template(otherProvider, otherScheduler, Duration.ofMillis(100));
			Map<String, Long> tokens = new HashMap<>();
			List<Lease> held = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				String key = "cluster-" + i + "-" + UUID.randomUUID();
				Lease lease = template.acquire(key, LockOptions.builder().leaseTime(Duration.ofMillis(600)).build());
				tokens.put(key, lease.fencingToken());
				held.add(lease);
			}
			long slots = held.stream().map((lease) -> slotOf("lock:" + lease.key())).distinct().count();
			// Three renewal intervals: only renewal keeps the 600 ms leases.
			LockSupport.parkNanos(Duration.ofMillis(600).toNanos());
			assertThat(held).allMatch(Lease::isHeld);
			for (Lease lease : held.subList(0, 20)) {
				assertThat(other.tryAcquire(lease.key(), LockOptions.builder().waitTime(Duration.ZERO).build()))
					.isEmpty();
			}
			held.forEach(Lease::release);
			for (Map.Entry<String, Long> entry : tokens.entrySet()) {
				try (Lease again = other.acquire(entry.getKey(), LockOptions.defaults())) {
					assertThat(again.fencingToken()).isGreaterThan(entry.getValue());
				}
			}
			System.out.printf("Cluster: 200 locks over %d slots on 3 masters held across three renewal intervals,"
					+ " %d renewal batches%n", slots, scheduler.batches());
		}
	}

	/**
	 * Issue: one failing slot failed every lease of a renewal batch. With the third
	 * master paused (SIGSTOP, shorter than the cluster's node timeout, so no failover),
	 * the leases in its slots are declared lost at their deadline, and the leases on the
	 * two healthy masters stay held across three lease times: their renewals are
	 * confirmed and reported while the paused master's call is still waiting.
	 */
	@Test
	void aPausedMasterCostsOnlyTheLeasesInItsSlots() {
		try (RedisLockProvider provider = provider(factory); RenewalScheduler scheduler = new RenewalScheduler()) {
			DefaultLockTemplate template = template(provider, scheduler, Duration.ofMillis(100));
			// Renewed every 600 ms: room for a loaded machine's scheduling delays (with
			// 1200 ms, every healthy lease was once declared lost at a load of 13). The
			// master stays paused for two lease times, well within the cluster's node
			// timeout (5 s): past it, the other masters declare the cluster down.
			Duration leaseTime = Duration.ofMillis(1800);
			List<Lease> onPaused = new ArrayList<>();
			List<Lease> healthy = new ArrayList<>();
			int pausedFrom = 2 * 16384 / 3;
			for (int i = 0; i < 60; i++) {
				Lease lease = template.acquire("paused-" + i + "-" + UUID.randomUUID(),
						LockOptions.builder().leaseTime(leaseTime).build());
				(slotOf("lock:" + lease.key()) >= pausedFrom ? onPaused : healthy).add(lease);
			}
			assertThat(onPaused).isNotEmpty();
			assertThat(healthy).isNotEmpty();
			RedisServer paused = cluster.nodes().get(2);
			paused.pause();
			try {
				long pausedAt = System.nanoTime();
				await("the leases on the paused master declared lost",
						() -> onPaused.stream().noneMatch(Lease::isHeld));
				await("two lease times passed",
						() -> System.nanoTime() - pausedAt > leaseTime.multipliedBy(2).toNanos());
				assertThat(healthy).as("leases on the healthy masters").allMatch(Lease::isHeld);
			}
			finally {
				paused.resume();
			}
			healthy.forEach(Lease::release);
		}
	}

	/**
	 * Read holds and permits are renewed per slot as plain locks are: with the first
	 * master paused for longer than the store timeout (shorter than the cluster's node
	 * timeout), the read hold on it is declared lost, and the read hold and the permit on
	 * the second master stay held, as does the plain lock there that shows its connection
	 * is fine. The paused master's hold is taken first, so its slot comes first in the
	 * renewal batch.
	 */
	@Test
	void aPausedMasterCostsOnlyTheReadHoldsAndPermitsInItsSlots() {
		try (RedisLockProvider provider = provider(factory); RenewalScheduler scheduler = new RenewalScheduler()) {
			DefaultLockTemplate template = template(provider, scheduler, Duration.ofMillis(100));
			Duration leaseTime = Duration.ofSeconds(3);
			Duration storeTimeout = provider.callTimeout();
			LockOptions read = LockOptions.builder().mode(LockMode.READ).leaseTime(leaseTime).build();
			LockOptions permit = LockOptions.builder().permits(2).leaseTime(leaseTime).build();
			LockOptions plain = LockOptions.builder().leaseTime(leaseTime).build();
			for (int master = 0; master < 2; master++) {
				// Connections and scripts ready on both masters first: the two reads must
				// be taken within half a renewal interval of each other to share a batch.
				template.acquire(keyOn(master), read).release();
				template.acquire(keyOn(master), permit).release();
			}
			Lease readOnPaused = template.acquire(keyOn(0), read);
			Lease readOnHealthy = template.acquire(keyOn(1), read);
			Lease permitOnHealthy = template.acquire(keyOn(1), permit);
			Lease control = template.acquire(keyOn(1), plain);
			RedisServer paused = cluster.nodes().get(0);
			paused.pause();
			try {
				long pausedAt = System.nanoTime();
				// Both reads were taken together, so their renewals share a batch and
				// their
				// leases end together: a renewal of the healthy master's hold sent only
				// after the paused master's answered (or timed out) came too late.
				await("the read hold on the paused master declared lost", () -> !readOnPaused.isHeld());
				await("the store timeout passed", () -> System.nanoTime() - pausedAt > storeTimeout.toNanos());
				assertThat(control.isHeld()).as("the plain lock on the healthy master").isTrue();
				assertThat(readOnHealthy.isHeld()).as("the read hold on the healthy master").isTrue();
				assertThat(permitOnHealthy.isHeld()).as("the permit on the healthy master").isTrue();
			}
			finally {
				paused.resume();
			}
			readOnHealthy.release();
			permitOnHealthy.release();
			control.release();
		}
	}

	/** A fresh key whose slot is served by master {@code index} of the three. */
	private static String keyOn(int index) {
		while (true) {
			String key = "on-" + index + "-" + UUID.randomUUID();
			int slot = slotOf("lock:" + key);
			if (slot >= index * 16384 / 3 && slot < (index + 1) * 16384 / 3) {
				return key;
			}
		}
	}

	@Test
	void aWaiterInAnotherJvmIsWokenByTheReleaseAndFairQueuesWork() throws Exception {
		try (RedisLockProvider provider = provider(factory);
				RedisLockProvider otherProvider = provider(otherFactory);
				RenewalScheduler scheduler = new RenewalScheduler();
				RenewalScheduler otherScheduler = new RenewalScheduler()) {
			Duration retry = Duration.ofSeconds(2);
			DefaultLockTemplate template = template(provider, scheduler, retry);
			DefaultLockTemplate other = template(otherProvider, otherScheduler, retry);
			for (boolean fair : new boolean[] { false, true }) {
				String key = "cluster-wait-" + UUID.randomUUID();
				LockOptions options = LockOptions.builder().fair(fair).build();
				Lease held = template.acquire(key, options);
				CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
					try (Lease lease = other.acquire(key, options)) {
						return System.nanoTime();
					}
				}, TestThreads.EACH);
				await("the waiter marked the lock",
						() -> TestRedis.mutexWaited(redis.opsForValue().get("lock:" + key)));
				await("the waiter's subscription is up", otherProvider::isListening);
				long released = System.nanoTime();
				held.release();
				long waitedMillis = TimeUnit.NANOSECONDS.toMillis(waiter.get(10, TimeUnit.SECONDS) - released);
				System.out.printf("Cluster: %s waiter in another JVM took the lock %d ms after the release"
						+ " (retry interval %d ms)%n", fair ? "fair" : "plain", waitedMillis, retry.toMillis());
				assertThat(waitedMillis).as("wake-up after release, ms").isLessThan(retry.toMillis() / 2);
			}
		}
	}

	/**
	 * A provider whose connection is up: a cold cluster connection (the topology, a
	 * connection per master) can take longer than the store timeout on a loaded machine.
	 */
	private static RedisLockProvider provider(LettuceConnectionFactory factory) {
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", true);
		TestRedis.awaitAnswers(provider);
		return provider;
	}

	private static DefaultLockTemplate template(RedisLockProvider provider, RenewalScheduler scheduler,
			Duration retry) {
		return new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(10))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(retry)
					.build());
	}

	private static int slotOf(String key) {
		return org.springframework.data.redis.connection.ClusterSlotHashUtil.calculateSlot(key);
	}

	private static void await(String what, BooleanSupplier condition) {
		Conditions.await(what, Duration.ofSeconds(10), condition);
	}

}
