package dev.distlock.support;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wait workers: every step runs, on at most the bound of threads, a step queued while
 * every worker is busy runs once one is free, idle workers end, and a closed pool runs
 * steps on the caller.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaitWorkersTests {

	private final WaitWorkers workers = new WaitWorkers("wait-workers-test-", 3, TimeUnit.MILLISECONDS.toNanos(200));

	@AfterEach
	void close() {
		this.workers.close();
	}

	@Test
	void everyStepRunsOnNoMoreThreadsThanTheBound() throws InterruptedException {
		CountDownLatch blocked = new CountDownLatch(1);
		AtomicInteger ran = new AtomicInteger();
		Set<String> threads = ConcurrentHashMap.newKeySet();
		Runnable blocking = () -> {
			threads.add(Thread.currentThread().getName());
			try {
				blocked.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			ran.incrementAndGet();
		};
		for (int i = 0; i < 5; i++) {
			this.workers.execute(blocking);
		}
		for (int i = 0; i < 1000; i++) {
			this.workers.execute(() -> {
				threads.add(Thread.currentThread().getName());
				ran.incrementAndGet();
			});
		}
		Await.until("every worker runs a blocked step", Duration.ofSeconds(10), () -> threads.size() == 3);
		assertThat(ran).hasValue(0);
		assertThat(this.workers.threads()).isEqualTo(3);
		blocked.countDown();
		Await.until("every step ran", Duration.ofSeconds(30), () -> ran.get() == 1005);
		assertThat(threads).hasSize(3).allSatisfy((name) -> assertThat(name).startsWith("wait-workers-test-"));
	}

	@Test
	void idleWorkersEndAndNewOnesStartForLaterSteps() {
		AtomicInteger ran = new AtomicInteger();
		for (int round = 0; round < 3; round++) {
			for (int i = 0; i < 50; i++) {
				this.workers.execute(ran::incrementAndGet);
			}
			int expected = 50 * (round + 1);
			Await.until("the steps ran", Duration.ofSeconds(10), () -> ran.get() == expected);
			Await.until("idle workers end", Duration.ofSeconds(10), () -> this.workers.threads() == 0);
		}
	}

	@Test
	void aStepFailingLeavesItsWorkerRunningLaterSteps() {
		AtomicInteger ran = new AtomicInteger();
		for (int i = 0; i < 20; i++) {
			this.workers.execute(() -> {
				throw new IllegalStateException("step failed on purpose");
			});
			this.workers.execute(ran::incrementAndGet);
		}
		Await.until("the other steps ran", Duration.ofSeconds(10), () -> ran.get() == 20);
		assertThat(this.workers.threads()).isBetween(0, 3);
	}

	@Test
	void onceClosedStepsRunOnTheCaller() {
		this.workers.close();
		Thread[] ranOn = new Thread[1];
		this.workers.execute(() -> ranOn[0] = Thread.currentThread());
		assertThat(ranOn[0]).isSameAs(Thread.currentThread());
	}

}
