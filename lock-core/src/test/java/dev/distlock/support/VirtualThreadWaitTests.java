package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many more virtual threads than carrier threads wait for one key through the blocking
 * API: a waiting virtual thread leaves its carrier, so every one of them gets to wait at
 * once (one pinned carrier per waiter would let only as many wait as there are carriers),
 * and all take the lock in turn. Virtual threads need JDK 21; the code base compiles for
 * 17, so they are made through reflection.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
@Tag("slow")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class VirtualThreadWaitTests {

	private static final int WAITERS = 1000;

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

	@Test
	void aThousandVirtualThreadsWaitAtOnceWithoutHoldingACarrier() throws Exception {
		String key = "virtual-" + UUID.randomUUID();
		LockOptions patient = LockOptions.builder().waitTime(Duration.ofMinutes(1)).build();
		Lease first = this.template.acquire(key, LockOptions.defaults());
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Future<?>> waiters = new ArrayList<>(WAITERS);
		ExecutorService virtualThreads = newVirtualThreadPerTaskExecutor();
		try {
			for (int i = 0; i < WAITERS; i++) {
				waiters.add(virtualThreads.submit(() -> {
					try (Lease lease = this.template.acquire(key, patient)) {
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						inside.decrementAndGet();
					}
				}));
			}
			Await.until("all virtual threads waiting at once", Duration.ofSeconds(60),
					() -> this.template.waitingThreads().getOrDefault(key, 0) == WAITERS);
			System.out.printf("%d virtual threads waiting at once on %d processors%n", WAITERS,
					Runtime.getRuntime().availableProcessors());
			first.release();
			for (Future<?> waiter : waiters) {
				waiter.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			virtualThreads.shutdownNow();
		}
		assertThat(overlaps).hasValue(0);
		assertThat(this.template.heldLocks()).isZero();
	}

	/** {@code Executors.newVirtualThreadPerTaskExecutor()}, a JDK 21 method. */
	private static ExecutorService newVirtualThreadPerTaskExecutor() throws ReflectiveOperationException {
		return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
	}

}
