package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Fair locks ({@code fair: true}) on a real Redis: waiters of three JVMs (three providers
 * with their own owner identities and subscriptions) take the lock in the order they
 * queued, although the releasing JVM's own waiter would otherwise win; a waiter that dies
 * blocks the queue for a bounded time only; one that gives up leaves at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class FairLockTests {

	private static final Duration RETRY = Duration.ofMillis(100);

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private final List<DefaultLockTemplate> jvms = new ArrayList<>();

	private final List<RedisLockProvider> providers = new ArrayList<>();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		server.close();
	}

	@BeforeEach
	void createJvms() {
		for (int i = 0; i < 3; i++) {
			RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
			RenewalScheduler scheduler = new RenewalScheduler();
			this.closeables.add(scheduler);
			this.closeables.add(provider);
			this.providers.add(provider);
			this.jvms.add(new DefaultLockTemplate(provider, scheduler,
					LockOptions.builder()
						.waitTime(Duration.ofSeconds(10))
						.leaseTime(Duration.ofSeconds(30))
						.autoRenew(true)
						.retryInterval(RETRY)
						.build()));
		}
	}

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	@Test
	void waitersOfSeveralJvmsTakeTheLockInTheOrderTheyQueued() throws Exception {
		for (int round = 0; round < 3; round++) {
			String key = key();
			Lease held = this.jvms.get(0).acquire(key, fair());
			List<String> taken = new CopyOnWriteArrayList<>();
			List<CompletableFuture<Void>> waiters = new ArrayList<>();
			// Queue order: JVM 1, JVM 2, then JVM 0, the holder's own, which would win a
			// race.
			int[] order = { 1, 2, 0 };
			for (int i = 0; i < order.length; i++) {
				String name = "jvm" + order[i];
				DefaultLockTemplate jvm = this.jvms.get(order[i]);
				waiters.add(CompletableFuture.runAsync(() -> {
					try (Lease lease = jvm.acquire(key, fair())) {
						taken.add(name);
					}
				}, (task) -> new Thread(task).start()));
				int queued = i + 1;
				await("waiter " + queued + " queued", () -> queueLength(key) == queued);
			}
			held.release();
			for (CompletableFuture<Void> waiter : waiters) {
				waiter.get(10, TimeUnit.SECONDS);
			}
			assertThat(taken).as("round %d", round).containsExactly("jvm1", "jvm2", "jvm0");
			assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
		}
	}

	@Test
	void aWaiterThatDiesBlocksTheQueueOnlyUntilItsPlaceExpires() throws Exception {
		String key = key();
		Lease held = this.jvms.get(0).acquire(key, fair());
		// A waiter that queued once and died: nobody refreshes its place.
		LockAttempt ghost = LockAttempt.join(this.providers.get(1)
			.tryLock(LockRequest.fair(key, Duration.ofSeconds(30), "ghost", Duration.ofSeconds(1))));
		assertThat(ghost).isInstanceOf(LockAttempt.Busy.class);
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
			try (Lease lease = this.jvms.get(2).acquire(key, fair())) {
				return System.nanoTime();
			}
		}, TestThreads.EACH);
		await("the live waiter queued behind the dead one", () -> queueLength(key) == 2);
		long released = System.nanoTime();
		held.release();
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(waiter.get(10, TimeUnit.SECONDS) - released);
		System.out.printf("Fair queue: a dead waiter at the head held up the next one %d ms (place kept 1000 ms,"
				+ " retry interval %d ms)%n", waitedMillis, RETRY.toMillis());
		assertThat(waitedMillis).isLessThanOrEqualTo(1000 + RETRY.toMillis() + 500);
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	@Test
	void aWaiterThatGivesUpLeavesTheQueueAtOnce() throws Exception {
		String key = key();
		Lease held = this.jvms.get(0).acquire(key, fair());
		Optional<Lease> gaveUp = this.jvms.get(1)
			.tryAcquire(key, LockOptions.builder().fair(true).waitTime(Duration.ofMillis(200)).build());
		assertThat(gaveUp).isEmpty();
		// The place is given up in the background (the caller has its answer), long
		// before the queue timeout would drop it.
		Conditions.await("the waiter left the queue", Duration.ofMillis(500), () -> queueLength(key) == 0);
		held.release();
		assertThat(redis.keys("*" + key + "*")).as("keys left").isEmpty();
	}

	private static LockOptions fair() {
		return LockOptions.builder().fair(true).build();
	}

	private static long queueLength(String key) {
		Set<String> queues = redis.keys("*lock:" + key + ":queue");
		if (queues.isEmpty()) {
			return 0;
		}
		Long length = redis.opsForZSet().zCard(queues.iterator().next());
		return (length != null) ? length : 0;
	}

	private static String key() {
		return "fair-" + UUID.randomUUID();
	}

	private static void await(String what, BooleanSupplier condition) {
		Conditions.await(what, Duration.ofSeconds(10), condition);
	}

}
