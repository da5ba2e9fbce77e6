package dev.distlock.support;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DefaultAsyncLockTemplate} on a real {@code redis-server}, with a second template
 * on its own connection standing for another JVM: async holders exclude each other, the
 * key is deleted before the caller hears the outcome and when it cancels, a key deleted
 * behind the holder's back fails the stage, a wait that runs out names the key, and a
 * thousand waiters add only a few threads.
 */
@Tag("server")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisAsyncLockTemplateTests {

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private static LettuceConnectionFactory otherFactory;

	private static StringRedisTemplate redis;

	private static final List<AutoCloseable> closeables = new ArrayList<>();

	private static DefaultLockTemplate template;

	private static DefaultAsyncLockTemplate async;

	/** Another JVM's template: its own provider, connection and scheduler. */
	private static DefaultLockTemplate other;

	private final ExecutorService worker = Executors.newSingleThreadExecutor();

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		factory = TestRedis.connectionFactory(server);
		otherFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(factory);
		// One pair of templates for the class: each opens its connections once.
		template = template(factory);
		async = new DefaultAsyncLockTemplate(template);
		other = template(otherFactory);
	}

	@AfterAll
	static void stopRedis() throws Exception {
		for (AutoCloseable closeable : closeables) {
			closeable.close();
		}
		factory.destroy();
		otherFactory.destroy();
		server.close();
	}

	private static DefaultLockTemplate template(LettuceConnectionFactory connections) {
		RenewalScheduler scheduler = new RenewalScheduler();
		RedisLockProvider provider = new RedisLockProvider(connections, TestRedis.PREFIX, false);
		DefaultLockTemplate created = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		closeables.add(created);
		closeables.add(scheduler);
		closeables.add(provider);
		return created;
	}

	@AfterEach
	void close() {
		this.worker.shutdownNow();
	}

	private static String key() {
		return "async-template-" + UUID.randomUUID();
	}

	private static boolean stored(String key) {
		return Boolean.TRUE.equals(redis.hasKey(TestRedis.PREFIX + key));
	}

	/**
	 * What the caller chains on an acquisition (of the template, or of the annotation's
	 * asynchronous path) runs on distlock's threads, never on the Redis client's: a
	 * caller that blocks there (a blocking release, say) must not stall the client's
	 * replies.
	 */
	@Test
	void stagesChainedOnAnAcquisitionNeverRunOnTheClientsThreads() throws Exception {
		String key = key();
		ContextLocking annotations = new ContextLocking(template);
		for (int i = 0; i < 20; i++) {
			assertThat(releasedOn(async.acquire(key, LockOptions.defaults()))).doesNotStartWith("lettuce");
			assertThat(releasedOn(annotations.acquire(List.of(), key, LockOptions.defaults()).thenApply(Optional::get)))
				.doesNotStartWith("lettuce");
		}
	}

	/**
	 * The thread a stage chained on {@code acquired} ran on, releasing the lease there.
	 */
	private static String releasedOn(CompletionStage<Lease> acquired) throws Exception {
		return acquired.thenApply((lease) -> {
			String name = Thread.currentThread().getName();
			lease.release();
			return name;
		}).toCompletableFuture().get(10, TimeUnit.SECONDS);
	}

	@Test
	void asyncHoldersInTwoJvmsExcludeEachOther() throws Exception {
		String key = key();
		DefaultAsyncLockTemplate second = new DefaultAsyncLockTemplate(other);
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofSeconds(60)).build();
		List<CompletableFuture<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			int index = i;
			runs.add(((i % 2 == 0) ? async : second).execute(key, patient, () -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				tokens.add(LockContext.current().orElseThrow().fencingToken());
				return CompletableFuture.supplyAsync(() -> {
					inside.decrementAndGet();
					return index;
				}, this.worker);
			}));
		}
		for (int i = 0; i < runs.size(); i++) {
			assertThat(runs.get(i).get(60, TimeUnit.SECONDS)).isEqualTo(i);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(tokens).hasSize(60).isSorted().doesNotHaveDuplicates();
		assertThat(stored(key)).isFalse();
	}

	@Test
	void theKeyIsDeletedBeforeTheCallerHearsAndTheActionRanOnlyWhileHeld() throws Exception {
		String key = key();
		Lease held = other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = async.execute(key, () -> {
			started.set(true);
			return work;
		});
		Conditions.await("the caller waits", Duration.ofSeconds(10),
				() -> template.waitingThreads().getOrDefault(key, 0) == 1);
		assertThat(started).as("started while another JVM held the lock").isFalse();
		held.release();
		Conditions.await("the action started", Duration.ofSeconds(10), started::get);
		assertThat(stored(key)).as("stored while the action runs").isTrue();
		CompletableFuture<Boolean> deletedWhenDone = run.thenApply((value) -> !stored(key));
		work.complete("done");
		assertThat(run.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(deletedWhenDone.get(10, TimeUnit.SECONDS)).as("deleted when the caller hears").isTrue();
	}

	@Test
	void cancellingTheCallersStageDeletesTheKey() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		AtomicBoolean started = new AtomicBoolean();
		CompletableFuture<String> run = async.execute(key, () -> {
			started.set(true);
			return work;
		});
		// The action runs once the acquire's answer has come; the key is in Redis a
		// little earlier, before the template holds the lease it gives back on cancel.
		Conditions.await("the action started", Duration.ofSeconds(10), started::get);
		run.cancel(false);
		assertThat(stored(key)).as("stored after cancel").isFalse();
		assertThat(work).isCancelled();
		assertThat(template.heldLocks()).isZero();
	}

	@Test
	void aKeyDeletedBehindTheHoldersBackFailsTheStage() throws Exception {
		String key = key();
		AtomicReference<Lease> lease = new AtomicReference<>();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = async.execute(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(300)).build(), () -> {
					lease.set(LockContext.current().orElseThrow());
					return work;
				});
		Conditions.await("the lock is held", Duration.ofSeconds(10), () -> lease.get() != null);
		redis.delete(TestRedis.PREFIX + key);
		Conditions.await("the renewal notices the loss", Duration.ofSeconds(10), () -> !lease.get().isHeld());
		work.complete("done");
		assertThat(failureOf(run)).isInstanceOf(LeaseLostException.class).hasMessageContaining(key);
	}

	/**
	 * The release, sent without a worker, reports a key the store lost before any renewal
	 * could notice: the stage fails as a blocking release would.
	 */
	@Test
	void aKeyDeletedBeforeTheReleaseFailsTheStage() throws Exception {
		assertReleaseReportsDeletedKey(LockOptions.defaults());
	}

	@Test
	void aFairKeyDeletedBeforeTheReleaseFailsTheStage() throws Exception {
		assertReleaseReportsDeletedKey(LockOptions.builder().fair(true).build());
	}

	private void assertReleaseReportsDeletedKey(LockOptions options) throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> run = async.execute(key, options, () -> work);
		Conditions.await("the lock is held", Duration.ofSeconds(10), () -> stored(key));
		redis.delete(TestRedis.PREFIX + key);
		work.complete("done");
		assertThat(failureOf(run)).isInstanceOf(LeaseLostException.class)
			.hasMessageContaining(key)
			.hasMessageContaining("at release");
		assertThat(template.heldLocks()).isZero();
	}

	@Test
	void aWaitThatRunsOutFailsNamingTheKey() throws Exception {
		String key = key();
		Lease held = other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		CompletableFuture<String> run = async.execute(key,
				LockOptions.builder().waitTime(Duration.ofMillis(300)).build(), () -> {
					started.set(true);
					return CompletableFuture.completedFuture("done");
				});
		assertThat(failureOf(run)).isInstanceOf(LockAcquisitionException.class).hasMessageContaining(key);
		assertThat(started).isFalse();
		held.release();
	}

	@Test
	void aThousandWaitersHoldNoThreadEach() throws Exception {
		String key = key();
		int waiters = 1000;
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		Lease held = other.acquire(key, LockOptions.defaults());
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofSeconds(90)).build();
		List<CompletableFuture<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < waiters; i++) {
			int index = i;
			runs.add(async.execute(key, patient, () -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				inside.decrementAndGet();
				return CompletableFuture.completedFuture(index);
			}));
		}
		Conditions.await("all wait", Duration.ofSeconds(30),
				() -> template.waitingThreads().getOrDefault(key, 0) == waiters);
		int peakWhileWaiting = threads.getPeakThreadCount();
		held.release();
		CompletableFuture.allOf(runs.toArray(new CompletableFuture<?>[0])).get(90, TimeUnit.SECONDS);
		System.out.printf("%d async callers waiting on one Redis key: %d threads before, peak %d while waiting%n",
				waiters, before, peakWhileWaiting);
		assertThat(peakWhileWaiting - before).as("threads added while %d callers waited", waiters)
			.isLessThanOrEqualTo(20);
		assertThat(overlaps).hasValue(0);
		assertThat(stored(key)).isFalse();
	}

	private static Throwable failureOf(CompletionStage<?> stage) throws Exception {
		try {
			stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			return ex.getCause();
		}
		catch (CancellationException ex) {
			return ex;
		}
		throw new AssertionError("completed normally");
	}

}
