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
import dev.distlock.inmemory.InMemoryLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ten thousand waiters on one hot key through {@link DefaultLockTemplate#acquireAsync},
 * on the in-memory store: each gets the lock in turn, one holder at a time, or gives up
 * at its wait time, and the wait costs a bounded number of threads, not one per waiter.
 */
@Tag("slow")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AsyncWaitScaleTests {

	private static final int WAITERS = 10_000;

	/** The threads the waits may add to the JVM's, whatever the number of waiters. */
	private static final int MAX_ADDED_THREADS = 20;

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final DefaultLockTemplate template = new DefaultLockTemplate(this.store, this.scheduler,
			LockOptions.builder()
				.waitTime(Duration.ofSeconds(5))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.build());

	@AfterEach
	void close() {
		this.template.close();
		this.scheduler.close();
	}

	/**
	 * Half the waiters wait long enough for all, half give up while the lock is still
	 * held: those get nothing at their wait time, the others the lock one after the
	 * other, never two at once, in the order they asked.
	 */
	@Test
	void tenThousandWaitersOnOneKeyTakeItInTurnOrTimeOutWithFewThreads() throws Exception {
		String key = "hot-" + UUID.randomUUID();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofMinutes(1)).build();
		LockOptions impatient = LockOptions.builder().waitTime(Duration.ofMillis(200)).build();
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		Lease first = this.template.acquire(key, LockOptions.defaults());
		int before = threads.getThreadCount();
		threads.resetPeakThreadCount();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		AtomicLong lastToken = new AtomicLong(first.fencingToken());
		AtomicInteger lastIndex = new AtomicInteger(-1);
		AtomicInteger outOfOrder = new AtomicInteger();
		List<CompletableFuture<Optional<Lease>>> waits = new ArrayList<>(WAITERS);
		for (int i = 0; i < WAITERS; i++) {
			int index = i;
			boolean isPatient = i % 2 == 0;
			CompletableFuture<Optional<Lease>> wait = this.template.acquireAsync(key, isPatient ? patient : impatient);
			waits.add(wait.thenApply((lease) -> {
				lease.ifPresent((held) -> {
					if (inside.incrementAndGet() != 1) {
						overlaps.incrementAndGet();
					}
					if (held.fencingToken() <= lastToken.getAndSet(held.fencingToken())
							|| index <= lastIndex.getAndSet(index)) {
						outOfOrder.incrementAndGet();
					}
					inside.decrementAndGet();
					held.release();
				});
				return lease;
			}));
		}
		Await.until("the impatient waiters gave up", Duration.ofSeconds(60),
				() -> waits.stream().filter(CompletableFuture::isDone).count() == WAITERS / 2);
		assertThat(this.template.waitingThreads()).containsEntry(key, WAITERS / 2);
		first.release();
		CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
		int peak = threads.getPeakThreadCount();
		System.out.printf("%d async waiters on one key: %d threads before, peak %d%n", WAITERS, before, peak);
		for (int i = 0; i < WAITERS; i++) {
			assertThat(waits.get(i).get().isPresent()).as("waiter %d got the lock", i).isEqualTo(i % 2 == 0);
		}
		assertThat(overlaps).hasValue(0);
		assertThat(outOfOrder).hasValue(0);
		assertThat(peak - before).as("threads added while %d callers waited", WAITERS)
			.isLessThanOrEqualTo(MAX_ADDED_THREADS);
		Await.until("every line left", Duration.ofSeconds(10), () -> this.template.queuedKeys() == 0);
		assertThat(this.template.heldLocks()).isZero();
	}

}
