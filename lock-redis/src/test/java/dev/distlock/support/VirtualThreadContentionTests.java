package dev.distlock.support;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A thousand virtual threads contending for four locks through
 * {@link DefaultLockTemplate} and {@link RedisLockProvider} on a real
 * {@code redis-server}, each incrementing its key's counter in Redis by a read, a yield
 * and a write while it holds the lock: any overlap of two holders would lose an
 * increment. Virtual threads need JDK 21; the code base compiles for 17, so they are made
 * through reflection.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Tag("server")
class VirtualThreadContentionTests {

	private static final int THREADS = 1000;

	private static final int KEYS = 4;

	private static final int INCREMENTS_PER_THREAD = 3;

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		// The client's defaults, as an application has them (60 s command timeout).
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		server.close();
	}

	@Test
	void aThousandVirtualThreadsOnFourKeysLoseNoIncrement() throws Exception {
		AtomicInteger[] inside = new AtomicInteger[KEYS];
		AtomicLong[] lastToken = new AtomicLong[KEYS];
		for (int k = 0; k < KEYS; k++) {
			inside[k] = new AtomicInteger();
			lastToken[k] = new AtomicLong(Long.MIN_VALUE);
			redis.delete(counterKey(k));
		}
		AtomicLongArray overlaps = new AtomicLongArray(KEYS);
		AtomicLongArray tokensNotIncreasing = new AtomicLongArray(KEYS);
		AtomicInteger onVirtualThreads = new AtomicInteger();
		Method isVirtual = Thread.class.getMethod("isVirtual");
		CountDownLatch allStarted = new CountDownLatch(THREADS);
		CountDownLatch go = new CountDownLatch(1);
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler, LockOptions.builder()
			// Every thread of a key in one line: a correct lock serves them all
			// far sooner than this.
			.waitTime(Duration.ofMinutes(4))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.build());
		ExecutorService virtualThreads = newVirtualThreadPerTaskExecutor();
		long started;
		try {
			List<Future<?>> tasks = new ArrayList<>();
			for (int i = 0; i < THREADS; i++) {
				int k = i % KEYS;
				tasks.add(virtualThreads.submit(() -> {
					if ((Boolean) isVirtual.invoke(Thread.currentThread())) {
						onVirtualThreads.incrementAndGet();
					}
					allStarted.countDown();
					go.await();
					for (int n = 0; n < INCREMENTS_PER_THREAD; n++) {
						template.run("vt-" + k, () -> {
							if (inside[k].incrementAndGet() != 1) {
								overlaps.incrementAndGet(k);
							}
							long token = LockContext.current().orElseThrow().fencingToken();
							if (token <= lastToken[k].getAndSet(token)) {
								tokensNotIncreasing.incrementAndGet(k);
							}
							String read = redis.opsForValue().get(counterKey(k));
							Thread.yield();
							redis.opsForValue()
								.set(counterKey(k), Long.toString(1 + ((read != null) ? Long.parseLong(read) : 0)));
							inside[k].decrementAndGet();
						});
					}
					return null;
				}));
			}
			assertThat(allStarted.await(2, TimeUnit.MINUTES)).as("all %d virtual threads started", THREADS).isTrue();
			started = System.nanoTime();
			go.countDown();
			for (Future<?> task : tasks) {
				task.get();
			}
		}
		finally {
			virtualThreads.shutdownNow();
			template.close();
			scheduler.close();
			provider.close();
		}
		long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
		System.out.printf("%d virtual threads, %d keys, %d lock holds: %d ms on %s%n", THREADS, KEYS,
				THREADS * INCREMENTS_PER_THREAD, tookMillis, Runtime.version());
		assertThat(onVirtualThreads.get()).as("tasks that ran on virtual threads").isEqualTo(THREADS);
		for (int k = 0; k < KEYS; k++) {
			assertThat(overlaps.get(k)).as("holders of key %d that found another holder inside", k).isZero();
			assertThat(tokensNotIncreasing.get(k)).as("fencing tokens of key %d not above the previous", k).isZero();
			assertThat(redis.opsForValue().get(counterKey(k))).as("counter of key %d", k)
				.isEqualTo(Long.toString((long) THREADS / KEYS * INCREMENTS_PER_THREAD));
		}
		assertThat(template.queuedKeys()).as("keys with local waiters left behind").isZero();
	}

	private static String counterKey(int k) {
		return "vt-counter-" + k;
	}

	/** {@code Executors.newVirtualThreadPerTaskExecutor()}, a JDK 21 method. */
	private static ExecutorService newVirtualThreadPerTaskExecutor() throws ReflectiveOperationException {
		return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
	}

}
