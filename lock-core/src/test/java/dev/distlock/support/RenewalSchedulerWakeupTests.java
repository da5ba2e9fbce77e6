package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scheduler's add and cancel path takes no lock, so its wake-up is a race between
 * threads adding tasks due sooner than the collector's plan and the collector writing a
 * new plan and parking. These tests use a collector that sleeps 60 s when idle: a lost
 * wake-up then shows as a task a minute late, far beyond any scheduling noise, and the
 * round's deadline (well under a minute) fails.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RenewalSchedulerWakeupTests {

	private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);

	/** Far below the idle sleep, far above scheduling noise on a loaded machine. */
	private static final long ROUND_DEADLINE_SECONDS = 20;

	/**
	 * Rounds of 8 threads, released together, each adding (spread over 200 microseconds)
	 * a task due within 100 microseconds, sooner than the collector's plan, while the
	 * collector is running the previous round's tasks or about to park: every task runs,
	 * none waits for the idle wake-up.
	 */
	@Test
	void tasksAddedWhileTheCollectorIsAboutToSleepAllRunWithoutWaitingForTheIdleWakeUp() throws Exception {
		int threads = 8;
		int rounds = 2_000;
		try (RenewalScheduler scheduler = new RenewalScheduler(IDLE_NANOS)) {
			AtomicLong worstLateNanos = new AtomicLong();
			CyclicBarrier start = new CyclicBarrier(threads);
			AtomicInteger failures = new AtomicInteger();
			List<Thread> adders = new ArrayList<>();
			CountDownLatch[] roundDone = new CountDownLatch[rounds];
			for (int r = 0; r < rounds; r++) {
				roundDone[r] = new CountDownLatch(threads);
			}
			for (int t = 0; t < threads; t++) {
				Thread adder = new Thread(() -> {
					try {
						for (int r = 0; r < rounds; r++) {
							start.await(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS);
							spreadOut(ThreadLocalRandom.current().nextLong(200_000));
							long delay = ThreadLocalRandom.current().nextLong(100_000);
							long due = System.nanoTime() + delay;
							CountDownLatch done = roundDone[r];
							scheduler.scheduleDeadlineCheck(() -> {
								worstLateNanos.accumulateAndGet(System.nanoTime() - due, Math::max);
								done.countDown();
							}, delay);
							if (!done.await(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS)) {
								failures.incrementAndGet();
								return;
							}
						}
					}
					catch (Exception ex) {
						failures.incrementAndGet();
					}
				}, "adder-" + t);
				adders.add(adder);
				adder.start();
			}
			for (Thread adder : adders) {
				adder.join(TimeUnit.SECONDS.toMillis(50));
			}
			long ran = 0;
			for (CountDownLatch done : roundDone) {
				ran += threads - done.getCount();
			}
			System.out.printf("Wake-up race: %d of %d tasks ran, worst %.1f ms after due%n", ran, threads * rounds,
					worstLateNanos.get() / 1e6);
			assertThat(failures).as("rounds whose tasks did not all run within %d s", ROUND_DEADLINE_SECONDS)
				.hasValue(0);
			assertThat(ran).isEqualTo(threads * rounds);
			assertThat(scheduler.pendingDeadlineChecks()).isZero();
		}
	}

	/**
	 * Spins for up to a fifth of a millisecond, so that the adds of one round reach the
	 * collector spread out, some while it decides how long to sleep (not a wait for a
	 * condition: no outcome depends on how long it spins).
	 */
	private static void spreadOut(long nanos) {
		long end = System.nanoTime() + nanos;
		while (System.nanoTime() - end < 0) {
			Thread.onSpinWait();
		}
	}

	/**
	 * Threads add and cancel tasks concurrently while the collector runs others: a
	 * cancelled task never runs, and the count of pending tasks is exact once they stop.
	 */
	@Test
	void cancelledTasksNeverRunAndTheCountIsExactWhenQuiet() throws Exception {
		int threads = 8;
		int perThread = 2_000;
		try (RenewalScheduler scheduler = new RenewalScheduler(IDLE_NANOS)) {
			AtomicInteger cancelledRan = new AtomicInteger();
			CountDownLatch dueRan = new CountDownLatch(threads * perThread / 2);
			List<Thread> workers = new ArrayList<>();
			List<List<RenewalScheduler.DeadlineCheck>> kept = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				List<RenewalScheduler.DeadlineCheck> mine = new ArrayList<>();
				kept.add(mine);
				Thread worker = new Thread(() -> {
					for (int i = 0; i < perThread; i++) {
						if (i % 2 == 0) {
							scheduler.scheduleDeadlineCheck(dueRan::countDown, 0);
						}
						else if (i % 4 == 1) {
							// due in an hour and cancelled: never runs, leaves nothing
							RenewalScheduler.DeadlineCheck check = scheduler
								.scheduleDeadlineCheck(cancelledRan::incrementAndGet, TimeUnit.HOURS.toNanos(1));
							scheduler.cancel(check);
						}
						else {
							mine.add(scheduler.scheduleDeadlineCheck(cancelledRan::incrementAndGet,
									TimeUnit.HOURS.toNanos(1)));
						}
					}
				});
				workers.add(worker);
				worker.start();
			}
			for (Thread worker : workers) {
				worker.join(TimeUnit.SECONDS.toMillis(50));
			}
			assertThat(dueRan.await(ROUND_DEADLINE_SECONDS, TimeUnit.SECONDS)).as("tasks due now all ran").isTrue();
			assertThat(scheduler.pendingDeadlineChecks()).isEqualTo(threads * perThread / 4);
			kept.forEach((checks) -> checks.forEach(scheduler::cancel));
			assertThat(scheduler.pendingDeadlineChecks()).isZero();
			assertThat(cancelledRan).hasValue(0);
		}
	}

}
