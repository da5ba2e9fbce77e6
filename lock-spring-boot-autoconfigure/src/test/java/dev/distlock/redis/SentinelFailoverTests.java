package dev.distlock.redis;

import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisSentinel;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * distlock on a real Redis Sentinel deployment (one master, one replica, three
 * sentinels), configured the way an application is: Boot's Redis auto-configuration with
 * {@code spring.data.redis.sentinel.master} and {@code .nodes}, Lettuce with Boot's
 * default client settings, and distlock's auto-configuration. Each application context
 * stands for one application instance (its own connections, its own owner identity). The
 * master fails over while locks are held and waited for, once by {@code kill -9} and once
 * by {@code SENTINEL FAILOVER}. A lock that the new master has is still held by its
 * holder and handed on by release; a lock that the new master lacks is reported lost to
 * its holder and goes to a waiter with a greater fencing token; the failover guard
 * refuses acquires while the master has no replica to acknowledge them.
 * <p>
 * The default build runs one failover (a refused guarded acquire leaves no lock on either
 * master, about 7 s); the two failovers with locks held and waited for (about 40 s) run
 * with {@code -Psoak} ({@code -Ddistlock.soak=true}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class SentinelFailoverTests {

	/** Long enough to outlast a failover, so a lease the new master has is kept. */
	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/**
	 * For leases the failover loses: renewed every one to two seconds, so the holder
	 * learns of the loss soon after it reaches the new master.
	 */
	private static final Duration SHORT_LEASE = Duration.ofSeconds(6);

	private static final Duration WAIT = Duration.ofSeconds(40);

	private final ExecutorService waiters = Executors.newCachedThreadPool();

	private final Queue<LockBackendException> backendFailures = new ConcurrentLinkedQueue<>();

	@AfterEach
	void stopWaiters() {
		this.waiters.shutdownNow();
		assertThat(this.backendFailures).as("waiters' backend failures")
			.allSatisfy((failure) -> assertThat(failure.getMessage()).containsPattern("'(kept|lost|late)'"));
	}

	/**
	 * {@code kill -9} of the master. The lock {@code lost} is removed from the replica
	 * just before, which is the state a master leaves behind when it dies before
	 * replicating a write (replication is asynchronous).
	 */
	@Test
	@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
	void aKilledMasterHandsOnTheLocksTheReplicaHadAndReportsTheOneItLacked() throws Exception {
		try (RedisSentinel deployment = RedisSentinel.start(); Apps apps = new Apps(deployment)) {
			LockTemplate holder = apps.holder();
			LockTemplate waiter = apps.waiter();
			LockTemplate guardedTemplate = apps.guarded();
			RedisServer master = deployment.master();
			RedisServer replica = deployment.replica();

			Lease kept = holder.acquire("kept", hold(LONG_LEASE));
			Lease lost = holder.acquire("lost", hold(SHORT_LEASE));
			Lease guarded = guardedTemplate.acquire("guarded", hold(LONG_LEASE));
			assertThat(replica.command("EXISTS", "lock:guarded")).as("acknowledged by the replica before it counted")
				.isEqualTo(":1");
			Conditions.await("the replica has both locks", Duration.ofSeconds(10),
					() -> ":2".equals(replica.command("EXISTS", "lock:kept", "lock:lost")));
			Future<Lease> keptWaiter = waitThroughFailover(waiter, "kept", LONG_LEASE);
			Future<Lease> lostWaiter = waitThroughFailover(waiter, "lost", LONG_LEASE);
			awaitWaitedFor(master, "kept");
			awaitWaitedFor(master, "lost");

			assertThat(replica.command("CONFIG", "SET", "replica-read-only", "no")).isEqualTo("+OK");
			assertThat(replica.command("DEL", "lock:lost")).isEqualTo(":1");
			master.kill();
			RedisServer promoted = deployment.awaitFailoverFrom(master);
			assertThat(promoted).isSameAs(replica);

			assertLostAndTakenByItsWaiter("lost", lost, lostWaiter);
			assertKeptAndHandedOnByRelease(promoted, kept, keptWaiter, lost, guarded);

			assertThat(guarded.isHeld()).as("a guarded lock outlives the failover").isTrue();
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> guardedTemplate.acquire("after", hold(LONG_LEASE)))
				.withMessageContaining("distributed-lock.redis.wait-for-replicas");
			assertThat(promoted.command("EXISTS", "lock:after")).as("the refused lock was released").isEqualTo(":0");
			guarded.release();
		}
	}

	/**
	 * {@code SENTINEL FAILOVER} promotes the replica at once, but the applications'
	 * connections stay on the old master, which goes on taking writes until the sentinels
	 * demote it (about ten seconds here). Locks taken there in that window are lost at
	 * the demotion, and their tokens, issued by the old master's counter, are passed by
	 * the new master's only through the clock floor. A connection opened in the window
	 * goes to the new master instead (the guard's acquires do, today). The guard refuses
	 * wherever its acquire lands, since neither master has a replica in the window.
	 */
	@Test
	@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
	void aSentinelFailoverLosesOnlyLocksTakenOnTheOldMasterWhichTheGuardRefuses() throws Exception {
		try (RedisSentinel deployment = RedisSentinel.start(); Apps apps = new Apps(deployment)) {
			LockTemplate holder = apps.holder();
			LockTemplate waiter = apps.waiter();
			LockTemplate guardedTemplate = apps.guarded();
			RedisServer master = deployment.master();
			RedisServer replica = deployment.replica();

			Lease kept = holder.acquire("kept", hold(LONG_LEASE));
			Lease guarded = guardedTemplate.acquire("guarded", hold(LONG_LEASE));
			Conditions.await("the replica has the lock", Duration.ofSeconds(10),
					() -> ":1".equals(replica.command("EXISTS", "lock:kept")));
			Future<Lease> keptWaiter = waitThroughFailover(waiter, "kept", LONG_LEASE);
			awaitWaitedFor(master, "kept");

			RedisServer promoted = deployment.failover();
			assertThat(promoted).isSameAs(replica);
			assertThat(master.command("INFO", "replication")).as("the old master, not demoted yet")
				.contains("role:master")
				.contains("connected_slaves:0");
			// The old master goes on handing out tokens, so its counter runs ahead of the
			// new master's.
			for (int i = 0; i < 5; i++) {
				holder.run("busy-" + i, () -> {
				});
			}
			Lease late = holder.acquire("late", hold(SHORT_LEASE));
			assertThat(master.command("EXISTS", "lock:late")).as("taken on the old master").isEqualTo(":1");
			assertThat(promoted.command("EXISTS", "lock:late")).isEqualTo(":0");
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> guardedTemplate.acquire("late-guarded", hold(LONG_LEASE)))
				.withMessageContaining("distributed-lock.redis.wait-for-replicas");
			// Not released on the new master today; see
			// aRefusedGuardedAcquireLeavesNoLockOnEitherMaster.
			assertThat(master.command("EXISTS", "lock:late-guarded")).isEqualTo(":0");
			Future<Lease> lateWaiter = waitThroughFailover(waiter, "late", SHORT_LEASE);
			awaitWaitedFor(master, "late");

			deployment.awaitReplicaOf(master, promoted);
			assertLostAndTakenByItsWaiter("late", late, lateWaiter);
			assertKeptAndHandedOnByRelease(promoted, kept, keptWaiter, late, guarded);

			assertThat(guarded.isHeld()).as("a guarded lock outlives the failover").isTrue();
			try (Lease after = guardedTemplate.acquire("after", hold(LONG_LEASE))) {
				assertThat(master.command("EXISTS", "lock:after"))
					.as("acknowledged by the demoted master, now a replica")
					.isEqualTo(":1");
				assertThat(after.fencingToken()).isGreaterThan(guarded.fencingToken());
			}
			guarded.release();
		}
	}

	/**
	 * The guard sends the acquire and {@code WAIT} as a pipeline, which Spring Data Redis
	 * runs on a dedicated connection opened for the call. Between
	 * {@code SENTINEL FAILOVER} and the old master's demotion, that connection (resolved
	 * through the sentinels) is on the new master while the shared one is still on the
	 * old. The release of a refused acquire must go out on the dedicated connection: sent
	 * on the shared one, as it was, it missed, and the lock stayed on the new master,
	 * owned by nobody, for a whole lease.
	 */
	@Test
	void aRefusedGuardedAcquireLeavesNoLockOnEitherMaster() {
		try (RedisSentinel deployment = RedisSentinel.start();
				ConfigurableApplicationContext guardedApp = start(deployment,
						"distributed-lock.redis.wait-for-replicas=1")) {
			LockTemplate guarded = guardedApp.getBean(LockTemplate.class);
			guarded.run("before", () -> {
			});
			RedisServer master = deployment.master();
			RedisServer promoted = deployment.failover();
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> guarded.acquire("refused", hold(LONG_LEASE)))
				.withMessageContaining("distributed-lock.redis.wait-for-replicas");
			assertThat(master.command("EXISTS", "lock:refused")).isEqualTo(":0");
			assertThat(promoted.command("EXISTS", "lock:refused")).as("the refused lock on the new master")
				.isEqualTo(":0");
		}
	}

	/**
	 * The failover lost {@code lost}: its waiter gets it with a greater token, and its
	 * holder learns of the loss and cannot release it.
	 */
	private static void assertLostAndTakenByItsWaiter(String key, Lease lost, Future<Lease> waiter) throws Exception {
		Lease taken = waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS);
		assertThat(taken.fencingToken()).isGreaterThan(lost.fencingToken());
		Conditions.await("the holder learns that it lost '" + key + "'", SHORT_LEASE, () -> !lost.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lost::release);
		assertThat(taken.isHeld()).isTrue();
		taken.release();
	}

	/**
	 * The new master has {@code kept}: its holder still holds it and nobody else does;
	 * released, it goes to its waiter with a token greater than every earlier one.
	 */
	private static void assertKeptAndHandedOnByRelease(RedisServer promoted, Lease kept, Future<Lease> waiter,
			Lease... earlier) throws Exception {
		awaitReleaseSubscriptionOn(promoted);
		assertThat(promoted.command("EXISTS", "lock:kept")).isEqualTo(":1");
		assertThat(kept.isHeld()).isTrue();
		assertThat(waiter).as("no second holder of 'kept'").isNotDone();
		// Releasing checks the owner on the new master, and throws if it is not ours.
		kept.release();
		try (Lease keptByWaiter = waiter.get(WAIT.toSeconds(), TimeUnit.SECONDS)) {
			assertThat(keptByWaiter.fencingToken()).isGreaterThan(kept.fencingToken())
				.isGreaterThan(Stream.of(earlier).mapToLong(Lease::fencingToken).max().orElseThrow());
		}
	}

	/**
	 * A waiter's busy attempt marks the lock (its value ends in {@code " w"}, see
	 * docs/stores/redis.md); seeing the mark means the waiter has asked and is waiting.
	 */
	private static void awaitWaitedFor(RedisServer master, String key) {
		Conditions.await("a waiter waits for '" + key + "'", Duration.ofSeconds(10),
				() -> TestRedis.mutexWaited(master.command("GET", "lock:" + key)));
	}

	/**
	 * Waits until an application (not a sentinel) has a subscription on {@code server}:
	 * the waiters' release signals came back after the failover, so a release wakes them
	 * instead of leaving them to poll.
	 */
	private static void awaitReleaseSubscriptionOn(RedisServer server) {
		Conditions.await("the waiters' release subscription is back on " + server.port(), Duration.ofSeconds(20),
				() -> server.command("CLIENT", "LIST")
					.lines()
					.anyMatch((client) -> !client.contains("name=sentinel-") && client.matches(".* sub=[1-9].*")));
	}

	private static LockOptions hold(Duration lease) {
		return LockOptions.builder().waitTime(Duration.ZERO).leaseTime(lease).autoRenew(true).build();
	}

	/**
	 * Waits for a lock as code that has to wait through a failover does. A waiter that
	 * sleeps while the master goes away asks again once Lettuce has reconnected to the
	 * new master; one whose attempt is on the wire when the master dies, or when the
	 * sentinels demote it, fails with {@link LockBackendException} (distlock does not
	 * retry a failed command within the wait time), and asks again here.
	 */
	private Future<Lease> waitThroughFailover(LockTemplate template, String key, Duration lease) {
		return this.waiters.submit(() -> {
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (true) {
				Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
				try {
					return template.acquire(key,
							LockOptions.builder().waitTime(left).leaseTime(lease).autoRenew(true).build());
				}
				catch (LockBackendException ex) {
					this.backendFailures.add(ex);
					if (left.isZero()) {
						throw ex;
					}
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
				}
			}
		});
	}

	private static ConfigurableApplicationContext start(RedisSentinel deployment, String... properties) {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.main.banner-mode=off", "spring.data.redis.sentinel.master=" + deployment.masterName(),
					"spring.data.redis.sentinel.nodes=" + deployment.nodes())
			.properties(properties)
			.run();
	}

	/**
	 * Three application instances on the deployment: a holder, a waiter, and one with the
	 * failover guard on ({@code distributed-lock.redis.wait-for-replicas=1}).
	 */
	private static final class Apps implements AutoCloseable {

		private final ConfigurableApplicationContext holder;

		private final ConfigurableApplicationContext waiter;

		private final ConfigurableApplicationContext guarded;

		Apps(RedisSentinel deployment) {
			this.holder = start(deployment);
			this.waiter = start(deployment);
			this.guarded = start(deployment, "distributed-lock.redis.wait-for-replicas=1");
		}

		LockTemplate holder() {
			return this.holder.getBean(LockTemplate.class);
		}

		LockTemplate waiter() {
			return this.waiter.getBean(LockTemplate.class);
		}

		LockTemplate guarded() {
			return this.guarded.getBean(LockTemplate.class);
		}

		@Override
		public void close() {
			this.guarded.close();
			this.waiter.close();
			this.holder.close();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class App {

	}

}
