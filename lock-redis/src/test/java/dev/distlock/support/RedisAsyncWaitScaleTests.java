package dev.distlock.support;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ten thousand waiters on one hot key through {@link DefaultLockTemplate#acquireAsync} on
 * a real {@code redis-server}, while a template standing for another JVM holds it: half
 * give up at their wait time, the rest take the lock one after the other once it is
 * released, and the wait costs a bounded number of threads, not one per waiter.
 */
@Tag("server")
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RedisAsyncWaitScaleTests {

	private static final int WAITERS = 10_000;

	/** The threads the waits may add to the JVM's, whatever the number of waiters. */
	private static final int MAX_ADDED_THREADS = 20;

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		server.close();
	}

	@Test
	void tenThousandWaitersOnOneKeyTakeItInTurnOrTimeOutWithFewThreads() throws Exception {
		String key = "hot-" + UUID.randomUUID();
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		RenewalScheduler scheduler = new RenewalScheduler();
		LockOptions defaults = LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.build();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler, defaults);
		DefaultLockTemplate otherJvm = new DefaultLockTemplate(provider, scheduler, defaults);
		try {
			LockOptions patient = LockOptions.builder().waitTime(Duration.ofMinutes(2)).build();
			LockOptions impatient = LockOptions.builder().waitTime(Duration.ofMillis(200)).build();
			ThreadMXBean threads = ManagementFactory.getThreadMXBean();
			Lease first = otherJvm.acquire(key, LockOptions.defaults());
			int before = threads.getThreadCount();
			threads.resetPeakThreadCount();
			AtomicInteger inside = new AtomicInteger();
			AtomicInteger overlaps = new AtomicInteger();
			AtomicLong lastToken = new AtomicLong(first.fencingToken());
			AtomicInteger tokensNotIncreasing = new AtomicInteger();
			List<CompletableFuture<Optional<Lease>>> waits = new ArrayList<>(WAITERS);
			for (int i = 0; i < WAITERS; i++) {
				CompletableFuture<Optional<Lease>> wait = template.acquireAsync(key,
						(i % 2 == 0) ? patient : impatient);
				waits.add(wait.thenApply((lease) -> {
					lease.ifPresent((held) -> {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						if (held.fencingToken() <= lastToken.getAndSet(held.fencingToken())) {
							tokensNotIncreasing.incrementAndGet();
						}
						inside.decrementAndGet();
						held.release();
					});
					return lease;
				}));
			}
			Conditions.await("the impatient waiters gave up", Duration.ofSeconds(60),
					() -> waits.stream().filter(CompletableFuture::isDone).count() == WAITERS / 2);
			first.release();
			CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0])).get(2, TimeUnit.MINUTES);
			int peak = threads.getPeakThreadCount();
			System.out.printf("%d async waiters on one Redis key: %d threads before, peak %d, %d local hand-overs%n",
					WAITERS, before, peak, template.localHandovers());
			for (int i = 0; i < WAITERS; i++) {
				assertThat(waits.get(i).get().isPresent()).as("waiter %d got the lock", i).isEqualTo(i % 2 == 0);
			}
			assertThat(overlaps).hasValue(0);
			assertThat(tokensNotIncreasing).hasValue(0);
			assertThat(peak - before).as("threads added while %d callers waited", WAITERS)
				.isLessThanOrEqualTo(MAX_ADDED_THREADS);
			Conditions.await("every line left", Duration.ofSeconds(10), () -> template.queuedKeys() == 0);
			assertThat(template.heldLocks()).isZero();
		}
		finally {
			template.close();
			otherJvm.close();
			scheduler.close();
			provider.close();
		}
	}

}
