package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.TokenBlock;
import dev.distlock.redis.TestRedis;
import dev.distlock.testsupport.Conditions;
import dev.distlock.testsupport.FaultProxy;
import dev.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Local hand-over on Redis, two templates over providers of their own standing for two
 * JVMs, with the default hand-over settings: fencing tokens rise across local passes and
 * JVMs (the acquire script reserves the block with {@code INCRBY}), a lock passed locally
 * costs no Redis command, and a waiter of the other JVM gets the lock while eight threads
 * of this one hammer it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisHandoverTests {

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		otherFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
	}

	@AfterAll
	static void stopRedis() {
		factory.destroy();
		otherFactory.destroy();
		server.close();
	}

	@AfterEach
	void close() throws Exception {
		this.threads.shutdownNow();
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	private DefaultLockTemplate template(LettuceConnectionFactory connections) {
		return template(connections, HandoverSettings.ON);
	}

	private DefaultLockTemplate template(LettuceConnectionFactory connections, HandoverSettings handover) {
		RedisLockProvider provider = new RedisLockProvider(connections, TestRedis.PREFIX, false);
		TestRedis.awaitAnswers(provider);
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(10))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build(),
				LeaseLossListener.NONE, true, LockObserver.NONE, handover);
		this.closeables.add(template);
		return template;
	}

	/**
	 * A thread of {@code jvm} that asks for {@code key}, once it waits in the JVM's line
	 * or at the store.
	 */
	private Future<Lease> waiting(DefaultLockTemplate jvm, String key) {
		AtomicReference<Thread> thread = new AtomicReference<>();
		Future<Lease> lease = this.threads.submit(() -> {
			thread.set(Thread.currentThread());
			return jvm.acquire(key, LockOptions.defaults());
		});
		Conditions.await("a waiting thread", Duration.ofSeconds(10),
				() -> thread.get() != null && (thread.get().getState() == Thread.State.WAITING
						|| thread.get().getState() == Thread.State.TIMED_WAITING));
		return lease;
	}

	/**
	 * Redis loses the lock key and the fencing counter (an eviction) while this JVM
	 * passes the lock among its threads, and another JVM takes it. With this JVM's
	 * replies slowed down, so that no owner check has answered yet, the holder hands the
	 * lock on: it is told at its release, and the thread at the line's gate, which asked
	 * after the other JVM took the lock, does not take a token of the old block (which
	 * would be below the other JVM's, while that JVM holds the lock); it waits for the
	 * other JVM and gets a greater token.
	 */
	@Test
	void aLockRedisLostIsNeverHandedToARequestMadeAfterAnotherJvmTookIt() throws Exception {
		String key = "evicted-" + UUID.randomUUID();
		try (FaultProxy proxy = FaultProxy.start(server.host(), server.port())) {
			LettuceConnectionFactory slow = TestRedis.connectionFactory(proxy.host(), proxy.port(),
					Duration.ofSeconds(10));
			this.closeables.add(slow::destroy);
			DefaultLockTemplate jvm = template(slow, new HandoverSettings(true, 32, Duration.ofMinutes(1)));
			Lease first = jvm.acquire(key, LockOptions.defaults());
			Future<Lease> second = waiting(jvm, key);
			first.release();
			Lease held = second.get(10, TimeUnit.SECONDS);
			assertThat(held.fencingToken()).isEqualTo(first.fencingToken() + 1);
			assertThat(redis.delete(List.of(TestRedis.PREFIX + key, TestRedis.PREFIX))).isEqualTo(2);
			Lease other = template(otherFactory).acquire(key, LockOptions.defaults());
			Future<Lease> late = waiting(jvm, key);
			proxy.delayReplies(Duration.ofMillis(300));
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(held::release);
			proxy.delayReplies(Duration.ZERO);
			assertThat(late).isNotDone();
			other.release();
			Lease next = late.get(10, TimeUnit.SECONDS);
			assertThat(next.fencingToken()).isGreaterThan(other.fencingToken());
			next.release();
		}
	}

	/**
	 * Two JVMs of four threads each on one key: mutual exclusion, tokens that rise in the
	 * order the lock was held, both JVMs handing over locally, and fewer acquire scripts
	 * than acquisitions.
	 */
	@Test
	void tokensRiseAcrossLocalHandOversAndJvms() throws Exception {
		String key = "handover-" + UUID.randomUUID();
		List<DefaultLockTemplate> jvms = List.of(template(factory), template(otherFactory));
		long scriptsBefore = TestRedis.scriptCalls(redis);
		List<Long> tokens = new ArrayList<>();
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		for (DefaultLockTemplate jvm : jvms) {
			for (int t = 0; t < 4; t++) {
				workers.add(this.threads.submit(() -> {
					for (int i = 0; i < 250; i++) {
						jvm.run(key, () -> {
							if (inside.incrementAndGet() != 1) {
								overlap.set(true);
							}
							tokens.add(LockContext.current().orElseThrow().fencingToken());
							inside.decrementAndGet();
						});
					}
				}));
			}
		}
		for (Future<?> worker : workers) {
			worker.get(100, TimeUnit.SECONDS);
		}
		long scripts = TestRedis.scriptCalls(redis) - scriptsBefore;
		long handovers = jvms.get(0).localHandovers() + jvms.get(1).localHandovers();
		System.out.println("Redis hand-over: 2,000 acquisitions, " + handovers + " local hand-overs, " + scripts
				+ " script calls");
		assertThat(overlap).isFalse();
		assertThat(tokens).hasSize(2000).isSorted().doesNotHaveDuplicates();
		assertThat(jvms.get(0).localHandovers()).isPositive();
		assertThat(jvms.get(1).localHandovers()).isPositive();
		// Without hand-over every acquisition costs an acquire and a release script at
		// least.
		assertThat(scripts).as("script calls for 2,000 acquisitions").isLessThan(2 * 2000);
	}

	/**
	 * The acquire script reserves the block: with the counter far ahead of the server's
	 * clock (so tokens come from the counter, not the clock), the next acquisition's
	 * token lies past the block's last. This server is this class's own, so the counter
	 * left ahead troubles no other test.
	 */
	@Test
	void theAcquireScriptReservesTheBlock() {
		// Eleven days ahead of the clock in microseconds, well inside Lua's exact
		// integers.
		long ahead = System.currentTimeMillis() * 1000 + 1_000_000_000_000L;
		redis.opsForValue().set(TestRedis.PREFIX, Long.toString(ahead));
		RedisLockProvider provider = new RedisLockProvider(factory, TestRedis.PREFIX, false);
		String key = "block-" + UUID.randomUUID();
		LockAttempt.Acquired acquired = (LockAttempt.Acquired) provider.tryLockBlock(key, Duration.ofSeconds(30), false,
				33);
		TokenBlock block = (TokenBlock) acquired.handle();
		assertThat(block.fencingToken()).isEqualTo(ahead + 1);
		assertThat(block.lastToken()).isEqualTo(block.fencingToken() + 32);
		assertThat(block.release()).isTrue();
		LockAttempt.Acquired next = (LockAttempt.Acquired) provider.tryLock(key, Duration.ofSeconds(30));
		assertThat(next.handle().fencingToken()).isEqualTo(block.lastToken() + 1);
		assertThat(next.handle().release()).isTrue();
	}

	/**
	 * The write-lock script, which takes the lock for a waiter whose first attempt found
	 * it busy, reserves the block as the acquire script does, and a busy attempt puts the
	 * counter back to its single token. As {@link #theAcquireScriptReservesTheBlock},
	 * with the counter far ahead of the clock.
	 */
	@Test
	void theWriteLockScriptReservesTheBlock() {
		long ahead = System.currentTimeMillis() * 1000 + 1_000_000_000_000L;
		redis.opsForValue().set(TestRedis.PREFIX, Long.toString(ahead));
		RedisLockProvider provider = new RedisLockProvider(factory, TestRedis.PREFIX, false);
		String key = "write-block-" + UUID.randomUUID();
		Duration lease = Duration.ofSeconds(30);
		LockAttempt.Acquired acquired = (LockAttempt.Acquired) provider.tryLockExclusive(key, lease, "w1", lease, true,
				33);
		TokenBlock block = (TokenBlock) acquired.handle();
		assertThat(block.fencingToken()).isEqualTo(ahead + 1);
		assertThat(block.lastToken()).isEqualTo(block.fencingToken() + 32);
		assertThat(provider.tryLockExclusive(key, lease, "w2", lease, true, 33)).isInstanceOf(LockAttempt.Busy.class);
		assertThat(redis.opsForValue().get(TestRedis.PREFIX)).isEqualTo(Long.toString(block.lastToken() + 1));
		assertThat(block.release()).isTrue();
		LockAttempt.Acquired next = (LockAttempt.Acquired) provider.tryLock(key, lease);
		assertThat(next.handle().fencingToken()).isEqualTo(block.lastToken() + 2);
		assertThat(next.handle().release()).isTrue();
	}

	/**
	 * A lock that a waiter takes after its first attempt found it held by another JVM
	 * (its later attempts go as a writer, recording an intent behind readers) is handed
	 * over locally like any other: the thread behind it in the line gets it in memory,
	 * with the next token of the block. It used to reserve a single token, so the whole
	 * run after a wait went back to Redis at once.
	 */
	@Test
	void aLockTakenAfterWaitingIsHandedOverLocally() throws Exception {
		String key = "handover-" + UUID.randomUUID();
		DefaultLockTemplate jvm = template(factory);
		Lease other = template(otherFactory).acquire(key, LockOptions.defaults());
		Future<Lease> first = waiting(jvm, key);
		Future<Lease> second = waiting(jvm, key);
		other.release();
		Lease held = first.get(10, TimeUnit.SECONDS);
		assertThat(held.fencingToken()).isGreaterThan(other.fencingToken());
		held.release();
		Lease next = second.get(10, TimeUnit.SECONDS);
		assertThat(next.fencingToken()).isEqualTo(held.fencingToken() + 1);
		assertThat(jvm.localHandovers()).isEqualTo(1);
		next.release();
	}

	/**
	 * A waiter of another JVM gets the lock while eight threads of this one hammer it,
	 * five times over: the JVM gives the lock back to Redis after at most 32 passes or 20
	 * ms, and its own waiters stand back after a release the other JVM's waiter had
	 * marked.
	 */
	@Test
	void aRemoteWaiterGetsTheLockWhileEightLocalThreadsHammerIt() throws Exception {
		String key = "handover-" + UUID.randomUUID();
		DefaultLockTemplate hammered = template(factory);
		DefaultLockTemplate remote = template(otherFactory);
		AtomicBoolean stop = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			workers.add(this.threads.submit(() -> {
				while (!stop.get()) {
					hammered.run(key, () -> {
					});
				}
			}));
		}
		Conditions.await("hand-overs under way", Duration.ofSeconds(30), () -> hammered.localHandovers() > 500);
		for (int round = 0; round < 5; round++) {
			try (Lease lease = remote.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build())) {
				assertThat(lease.isHeld()).isTrue();
			}
		}
		stop.set(true);
		for (Future<?> worker : workers) {
			worker.get(30, TimeUnit.SECONDS);
		}
	}

}
