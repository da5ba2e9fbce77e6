package dev.distlock.reactive;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.support.Await;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ten thousand reactive pipelines waiting on one hot key, on the in-memory store: each
 * runs its work holding the lock, one at a time, with rising fencing tokens, and the wait
 * costs a bounded number of threads, not one per waiter.
 */
@Tag("slow")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReactiveWaitScaleTests {

	private static final int WAITERS = 10_000;

	/** The threads the waits may add to the JVM's, whatever the number of waiters. */
	private static final int MAX_ADDED_THREADS = 20;

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final DefaultLockTemplate template = new DefaultLockTemplate(this.store, this.scheduler,
			LockOptions.builder()
				.waitTime(Duration.ofMinutes(1))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.build());

	private final DefaultReactiveLockTemplate reactive = new DefaultReactiveLockTemplate(this.template);

	@AfterEach
	void close() {
		this.template.close();
		this.scheduler.close();
	}

	@Test
	void tenThousandPipelinesOnOneKeyTakeItInTurnWithFewThreads() {
		String key = "hot-" + UUID.randomUUID();
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		// The scheduler the pipelines resume on is started before counting.
		Mono.just(1).publishOn(reactor.core.scheduler.Schedulers.parallel()).block();
		Lease first = this.template.acquire(key, LockOptions.defaults());
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicLong lastToken = new AtomicLong(first.fencingToken());
		AtomicInteger outOfOrder = new AtomicInteger();
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
		AtomicInteger completed = new AtomicInteger();
		Flux.merge(Flux.fromIterable(runs), WAITERS).doOnNext((token) -> completed.incrementAndGet()).subscribe();
		Await.until("every pipeline waits", Duration.ofSeconds(60),
				() -> this.template.waitingThreads().getOrDefault(key, 0) == WAITERS);
		int peakWhileWaiting = threads.getPeakThreadCount();
		first.release();
		Await.until("every pipeline ran", Duration.ofSeconds(90), () -> completed.get() == WAITERS);
		int peak = threads.getPeakThreadCount();
		System.out.printf("%d reactive waiters on one key: %d threads before, peak %d while waiting, %d overall%n",
				WAITERS, before, peakWhileWaiting, peak);
		assertThat(overlaps).hasValue(0);
		assertThat(outOfOrder).hasValue(0);
		assertThat(peak - before).as("threads added while %d pipelines waited", WAITERS)
			.isLessThanOrEqualTo(MAX_ADDED_THREADS);
		Await.until("every line left", Duration.ofSeconds(10), () -> this.template.queuedKeys() == 0);
		assertThat(this.template.heldLocks()).isZero();
	}

}
