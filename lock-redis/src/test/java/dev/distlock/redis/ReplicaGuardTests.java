package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockBackendException;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.fail;

/**
 * The failover guard ({@code distributed-lock.redis.wait-for-replicas}) against a real
 * master and replica: with the replica up an acquire counts; with the replica stopped it
 * is released and reported, while the same acquire without the guard succeeds (the
 * control showing what the guard prevents).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ReplicaGuardTests {

	@Test
	void anAcquireCountsOnlyWhenTheReplicasAcknowledgeIt() {
		try (RedisServer master = RedisServer.start();
				RedisServer replica = RedisServer.start("--replicaof", master.host(),
						Integer.toString(master.port()))) {
			LettuceConnectionFactory factory = TestRedis.connectionFactory(master);
			try {
				StringRedisTemplate redis = new StringRedisTemplate(factory);
				awaitReplicas(redis, 1);
				// "online" on the master is a replica that got the snapshot, which may
				// still be loading it: a write seen on the replica shows it applies the
				// stream, and so answers WAIT.
				redis.opsForValue().set("replica-ready", "1");
				assertThat(replicaValue(replica, "replica-ready")).as("a write seen on the replica").isTrue();
				// Room for a replica on a loaded machine (the build runs test
				// classes side by side on 2 cores): what is checked is that an
				// acknowledged acquire counts and an unacknowledged one does not.
				RedisLockProvider guarded = new RedisLockProvider(factory, "lock:", false, 1, Duration.ofSeconds(2));
				RedisLockProvider unguarded = new RedisLockProvider(factory, "lock:", false);

				LockHandle handle = acquired(
						LockAttempt.join(guarded.tryLock(LockRequest.exclusive("replicated", Duration.ofSeconds(30)))));
				assertThat(replicaValue(replica, "lock:replicated")).as("the lock on the replica").isTrue();
				assertThat(handle.release()).isTrue();

				replica.stop();
				awaitReplicas(redis, 0);
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt
						.join(guarded.tryLock(LockRequest.exclusive("unreplicated", Duration.ofSeconds(30)))))
					.withMessageContaining("only 0 of 1 replicas acknowledged")
					.withMessageContaining("distributed-lock.redis.wait-for-replicas");
				assertThat(redis.hasKey("lock:unreplicated")).as("the unacknowledged lock was released").isFalse();

				LockHandle control = acquired(LockAttempt
					.join(unguarded.tryLock(LockRequest.exclusive("unreplicated", Duration.ofSeconds(30)))));
				assertThat(control.release()).isTrue();
			}
			finally {
				factory.destroy();
			}
		}
	}

	/**
	 * Without Spring Boot, the provider itself refuses the guard on a cluster, whether it
	 * is told it runs on one or its connection factory is a cluster's: {@code WAIT} would
	 * go to the node of its arguments' slot, not the lock's. Nothing is connected.
	 */
	@Test
	void theGuardIsRefusedOnACluster() {
		LettuceConnectionFactory clusterFactory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(List.of("127.0.0.1:7000")));
		for (boolean cluster : new boolean[] { true, false }) {
			assertThatIllegalArgumentException()
				.isThrownBy(() -> new RedisLockProvider(clusterFactory, "lock:", cluster, 1, Duration.ofSeconds(1)))
				.withMessageContaining("distributed-lock.redis.wait-for-replicas")
				.withMessageContaining("Redis Cluster");
		}
	}

	/**
	 * The guard's {@code WAIT} covers the plain lock's acquire script only, so the
	 * guarded store offers plain locks only: every other kind is refused with one message
	 * naming the store and the setting, before any script runs.
	 */
	@Test
	void theGuardOffersPlainLocksOnlyAndRefusesTheRestNamingTheSetting() {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory factory = TestRedis.connectionFactory(server);
			try (RedisLockProvider guarded = new RedisLockProvider(factory, "lock:", false, 1, Duration.ofSeconds(1));
					RedisLockProvider unguarded = new RedisLockProvider(factory, "lock:", false)) {
				assertThat(unguarded.kinds()).containsExactlyInAnyOrder(LockKind.values());
				assertThat(guarded.kinds()).containsExactly(LockKind.EXCLUSIVE);
				for (LockKind kind : List.of(LockKind.FAIR, LockKind.SHARED, LockKind.PERMITS, LockKind.MULTI)) {
					assertThat(Capabilities.refusal(guarded, kind)).as(kind.name())
						.hasValueSatisfying((reason) -> assertThat(reason).contains(kind.description(), "redis store",
								"distributed-lock.redis.wait-for-replicas"));
				}
				assertThatExceptionOfType(UnsupportedOperationException.class)
					.isThrownBy(
							() -> LockAttempt.join(guarded.tryLock(LockRequest.shared("read", Duration.ofSeconds(30)))))
					.withMessageContaining("Lock 'read'")
					.withMessageContaining("Read locks");
				assertThat(new StringRedisTemplate(factory).hasKey("lock:read")).as("nothing written").isFalse();
			}
			finally {
				factory.destroy();
			}
		}
	}

	private static boolean replicaValue(RedisServer replica, String key) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (System.nanoTime() < deadline) {
			if (replica.command("EXISTS", key).equals(":1")) {
				return true;
			}
			LockSupport.parkNanos(1_000_000);
		}
		return false;
	}

	private static void awaitReplicas(StringRedisTemplate redis, int replicas) {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (System.nanoTime() < deadline) {
			Properties info = redis.execute((RedisCallback<Properties>) (c) -> c.serverCommands().info("replication"));
			String connected = (info != null) ? info.getProperty("connected_slaves") : null;
			String state = (info != null) ? info.getProperty("slave0") : null;
			boolean online = replicas == 0 || (state != null && state.contains("state=online"));
			if (Integer.toString(replicas).equals(connected) && online) {
				return;
			}
			LockSupport.parkNanos(10_000_000);
		}
		fail("the master did not report " + replicas + " connected replica(s) within 20s");
	}

	private static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected the lock to be acquired but was " + attempt);
	}

}
