package dev.distlock.reactive;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.ReactorBlockHoundIntegration;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive template on a real {@code redis-server}: acquisitions, releases and
 * contended waits subscribed from a Reactor parallel scheduler's threads make no blocking
 * call there (BlockHound fails any; it checks only this class's scheduler), and thousands
 * of pipelines waiting on one hot key take it in turn with a bounded number of threads.
 */
@Tag("server")
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class RedisReactiveNonBlockingTests {

	private static final String NON_BLOCKING = "blockhound-redis";

	private static final int WAITERS = 1_000;

	private static final int MAX_ADDED_THREADS = 20;

	private static final List<Throwable> blocked = new CopyOnWriteArrayList<>();

	private static RedisServer server;

	private static LettuceConnectionFactory factory;

	private final RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final DefaultLockTemplate template = new DefaultLockTemplate(this.provider, this.scheduler,
			LockOptions.builder()
				.waitTime(Duration.ofMinutes(3))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.build());

	/** Stands for another JVM. */
	private final DefaultLockTemplate other = new DefaultLockTemplate(this.provider, this.scheduler,
			LockOptions.builder()
				.waitTime(Duration.ofSeconds(5))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.build());

	private final Scheduler parallel = Schedulers.newParallel(NON_BLOCKING);

	private final DefaultReactiveLockTemplate reactive = new DefaultReactiveLockTemplate(this.template, this.parallel);

	@BeforeAll
	static void start() {
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> (thread) -> thread.getName().startsWith(NON_BLOCKING))
			.blockingMethodCallback((method) -> {
				Error error = new Error("Blocking call on a non-blocking thread: " + method);
				blocked.add(error);
				throw error;
			})
			.install();
		Hooks.onErrorDropped(blocked::add);
		server = RedisServer.start();
		factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
	}

	@AfterAll
	static void stop() {
		factory.destroy();
		server.close();
	}

	@AfterEach
	void close() {
		this.parallel.dispose();
		this.template.close();
		this.other.close();
		this.scheduler.close();
		this.provider.close();
	}

	/**
	 * The store answers on the Redis client's threads; the pipeline goes on on its own
	 * scheduler, after the lease is taken and after it is released, so no work of the
	 * subscriber's ever runs on a client thread.
	 */
	@Test
	void thePipelineGoesOnOnItsSchedulerNeverOnTheClientsThreads() {
		String key = "resume-" + UUID.randomUUID();
		List<String> threads = new CopyOnWriteArrayList<>();
		for (int i = 0; i < 20; i++) {
			this.reactive.acquire(key, LockOptions.defaults())
				.doOnNext((lease) -> threads.add(Thread.currentThread().getName()))
				.flatMap((lease) -> this.reactive.release(lease))
				.doOnSuccess((done) -> threads.add(Thread.currentThread().getName()))
				.block(Duration.ofSeconds(10));
			this.reactive
				.executeMono(key, LockOptions.defaults(),
						() -> Mono.fromSupplier(() -> threads.add(Thread.currentThread().getName())))
				.block(Duration.ofSeconds(10));
		}
		assertThat(threads).hasSize(60).allMatch((name) -> name.startsWith(NON_BLOCKING), "on the scheduler");
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void contendedAcquisitionsAndReleasesNeverBlockANonBlockingThread() {
		blocked.clear();
		String key = "blockhound-" + UUID.randomUUID();
		Mono.fromRunnable(() -> {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).subscribeOn(this.parallel).onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
		assertThat(blocked).as("BlockHound checks the scheduler's threads").isNotEmpty();
		blocked.clear();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Mono<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			int index = i;
			runs.add(Mono
				.defer(() -> this.reactive.executeMono(key, LockOptions.defaults(), () -> Mono.fromSupplier(() -> {
					if (inside.incrementAndGet() != 1) {
						overlaps.incrementAndGet();
					}
					inside.decrementAndGet();
					return index;
				})))
				.subscribeOn(this.parallel));
		}
		Mono<List<Integer>> all = Flux.merge(runs).collectList().cache();
		all.subscribe();
		Conditions.await("the pipelines wait", Duration.ofSeconds(30),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == 100);
		held.release();
		assertThat(all.block(Duration.ofSeconds(60))).hasSize(100);
		Lease lease = this.reactive.acquire(key, LockOptions.defaults())
			.subscribeOn(this.parallel)
			.block(Duration.ofSeconds(10));
		this.reactive.release(lease).subscribeOn(this.parallel).block(Duration.ofSeconds(10));
		assertThat(overlaps).hasValue(0);
		assertThat(blocked).as("blocking calls on non-blocking threads").isEmpty();
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void thousandsOfPipelinesOnOneHotKeyTakeItInTurnWithFewThreads() {
		String key = "hot-" + UUID.randomUUID();
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		Mono.just(1).publishOn(this.parallel).block();
		Lease first = this.other.acquire(key, LockOptions.defaults());
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicLong lastToken = new AtomicLong(first.fencingToken());
		AtomicInteger outOfOrder = new AtomicInteger();
		AtomicInteger completed = new AtomicInteger();
		List<Mono<Long>> runs = new ArrayList<>(WAITERS);
		for (int i = 0; i < WAITERS; i++) {
			runs.add(this.reactive.executeMono(key, LockOptions.defaults(),
					() -> ReactiveLockContext.current().map((lease) -> {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						if (lease.fencingToken() <= lastToken.getAndSet(lease.fencingToken())) {
							outOfOrder.incrementAndGet();
						}
						inside.decrementAndGet();
						return lease.fencingToken();
					})));
		}
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Flux.merge(Flux.fromIterable(runs), WAITERS)
			.doOnNext((token) -> completed.incrementAndGet())
			.subscribe(null, failure::set);
		Conditions.await("every pipeline waits", Duration.ofSeconds(60),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == WAITERS);
		int peakWhileWaiting = threads.getPeakThreadCount();
		first.release();
		Conditions.await("every pipeline ran", Duration.ofSeconds(170),
				() -> completed.get() == WAITERS || failure.get() != null);
		assertThat(failure.get()).as("a pipeline failed").isNull();
		int peak = threads.getPeakThreadCount();
		System.out.printf(
				"%d reactive waiters on one Redis key: %d threads before, peak %d while waiting, %d overall%n", WAITERS,
				before, peakWhileWaiting, peak);
		assertThat(overlaps).hasValue(0);
		assertThat(outOfOrder).hasValue(0);
		assertThat(peak - before).as("threads added while %d pipelines waited", WAITERS)
			.isLessThanOrEqualTo(MAX_ADDED_THREADS);
		Conditions.await("every line left", Duration.ofSeconds(10), () -> this.template.queuedKeys() == 0);
		assertThat(this.template.heldLocks()).isZero();
	}

}
