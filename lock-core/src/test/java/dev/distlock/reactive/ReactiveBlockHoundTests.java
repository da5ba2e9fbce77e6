package dev.distlock.reactive;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive template never blocks a Reactor non-blocking thread, on the in-memory
 * store: acquisitions, releases, contended waits, cancellations and nested re-entry all
 * subscribed from a parallel scheduler's threads, with BlockHound failing any blocking
 * call made on them. BlockHound checks only this class's scheduler, so other tests in the
 * same JVM are not affected.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReactiveBlockHoundTests {

	/** The threads BlockHound checks: a parallel scheduler like Schedulers.parallel(). */
	static final String NON_BLOCKING = "blockhound-parallel";

	private static final List<Throwable> blocked = new CopyOnWriteArrayList<>();

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private static final LockOptions DEFAULTS = LockOptions.builder()
		.waitTime(Duration.ofSeconds(20))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.build();

	private final DefaultLockTemplate template = new DefaultLockTemplate(this.store, this.scheduler, DEFAULTS);

	private final Scheduler parallel = Schedulers.newParallel(NON_BLOCKING);

	private final DefaultReactiveLockTemplate reactive = new DefaultReactiveLockTemplate(this.template, this.parallel);

	@BeforeAll
	static void installBlockHound() {
		install();
	}

	/**
	 * Checks only threads of {@link #NON_BLOCKING} schedulers, and records what blocked
	 * (Reactor would otherwise report it only as a dropped error).
	 */
	static void install() {
		BlockHound.builder()
			.with(new ReactorBlockHoundIntegration())
			.nonBlockingThreadPredicate((current) -> (thread) -> thread.getName().startsWith(NON_BLOCKING))
			.blockingMethodCallback((method) -> {
				StringBuilder where = new StringBuilder();
				for (StackTraceElement frame : Thread.currentThread().getStackTrace()) {
					where.append("\n\tat ").append(frame);
				}
				Error error = new Error("Blocking call on a non-blocking thread: " + method + where);
				blocked.add(error);
				throw error;
			})
			.install();
		Hooks.onErrorDropped(blocked::add);
	}

	/** What blocked on a checked thread since the last call. */
	static List<Throwable> drainBlocked() {
		List<Throwable> seen = new ArrayList<>(blocked);
		blocked.clear();
		return seen;
	}

	@AfterEach
	void close() {
		this.parallel.dispose();
		this.template.close();
		this.scheduler.close();
	}

	/** BlockHound is installed and sees a blocking call on the checked threads. */
	@Test
	void blockHoundCatchesABlockingCallOnTheCheckedThreads() {
		drainBlocked();
		Mono.fromRunnable(() -> {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}).subscribeOn(this.parallel).onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
		assertThat(drainBlocked()).isNotEmpty();
	}

	@Test
	void contendedAcquisitionsReleasesAndCancellationsNeverBlock() {
		drainBlocked();
		String key = "blockhound-" + UUID.randomUUID();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Mono<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			int index = i;
			runs.add(Mono
				.defer(() -> this.reactive.executeMono(key, LockOptions.defaults(), () -> Mono.fromSupplier(() -> {
					if (inside.incrementAndGet() != 1) {
						overlaps.incrementAndGet();
					}
					inside.decrementAndGet();
					return index;
				}).subscribeOn(this.parallel)))
				.subscribeOn(this.parallel));
		}
		List<Integer> done = Flux.merge(runs).collectList().block(Duration.ofSeconds(30));
		assertThat(done).hasSize(200);
		assertThat(overlaps).hasValue(0);
		Lease held = this.reactive.acquire(key, LockOptions.defaults())
			.subscribeOn(this.parallel)
			.block(Duration.ofSeconds(10));
		Mono.defer(() -> this.reactive.executeMono(key, LockOptions.defaults(), () -> Mono.just(1)))
			.subscribeOn(this.parallel)
			.timeout(Duration.ofMillis(200), Mono.just(0))
			.block(Duration.ofSeconds(10));
		this.reactive.release(held).subscribeOn(this.parallel).block(Duration.ofSeconds(10));
		String nested = this.reactive
			.executeMono(key, LockOptions.builder().mode(LockMode.READ).build(),
					() -> this.reactive.executeMono(key, LockOptions.builder().mode(LockMode.READ).build(),
							() -> Mono.just("nested")))
			.subscribeOn(this.parallel)
			.block(Duration.ofSeconds(10));
		assertThat(nested).isEqualTo("nested");
		assertThat(drainBlocked()).as("blocking calls on non-blocking threads").isEmpty();
		assertThat(this.template.heldLocks()).isZero();
	}

	/**
	 * Steps handed to the wait workers from several checked threads at once, on templates
	 * whose workers are not started yet: starting workers must take no lock another
	 * thread can hold (a thread pool's own lock, contended, parks the event loop).
	 */
	@Test
	@Tag("slow")
	void startingWaitWorkersFromManyEventLoopsAtOnceNeverBlocks() {
		drainBlocked();
		int loops = 8;
		Scheduler burst = Schedulers.newParallel(NON_BLOCKING + "-burst", loops);
		try {
			for (int round = 0; round < 200; round++) {
				DefaultLockTemplate fresh = new DefaultLockTemplate(this.store, this.scheduler, DEFAULTS);
				DefaultReactiveLockTemplate reactive = new DefaultReactiveLockTemplate(fresh, burst);
				AtomicBoolean go = new AtomicBoolean();
				AtomicInteger ready = new AtomicInteger();
				List<Mono<Integer>> cycles = new ArrayList<>();
				for (int i = 0; i < loops; i++) {
					String key = "burst-" + round + "-" + i + "-" + UUID.randomUUID();
					cycles.add(Mono.defer(() -> {
						ready.incrementAndGet();
						// Spinning, as BlockHound counts even Thread.onSpinWait as
						// blocking.
						long spins = 0;
						while (!go.get()) {
							spins++;
						}
						return reactive.executeMono(key, LockOptions.defaults(), () -> Mono.just(1));
					}).subscribeOn(burst));
				}
				List<Integer> done = Flux.merge(cycles)
					.collectList()
					.doOnSubscribe((subscription) -> Schedulers.single().schedule(() -> {
						// Two cycles may share a thread: then not all get ready.
						long giveUpAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
						while (ready.get() < loops && System.nanoTime() < giveUpAt) {
							Thread.onSpinWait();
						}
						go.set(true);
					}))
					.block(Duration.ofSeconds(30));
				assertThat(done).hasSize(loops);
				fresh.close();
			}
		}
		finally {
			burst.dispose();
		}
		assertThat(drainBlocked()).as("blocking calls on non-blocking threads").isEmpty();
	}

}
