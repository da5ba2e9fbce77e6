package dev.distlock.harness.family;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.DistributedLatch;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

/**
 * "A latch never opens early", checked under a fault: round after round, a latch of count
 * 3 is counted down by participants in two templates (two JVMs' worth), each of which
 * retries its call when the store fails and then calls once more (a retry whose first
 * reply was lost looks just like that), while waiters in both templates await it. Every
 * other round, only 2 of the 3 participants count down.
 *
 * <p>
 * What must hold: a waiter sees the latch open only after the third distinct participant
 * began its first call, and never in a round with 2 participants; no unexpected error.
 */
public final class LatchFaultCheck {

	private static final int COUNT = 3;

	private final List<DefaultLockTemplate> templates = new ArrayList<>();

	private final List<RenewalScheduler> schedulers = new ArrayList<>();

	private final String prefix = "family-latch-" + System.nanoTime() + "-";

	private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();

	private final List<String> early = Collections.synchronizedList(new ArrayList<>());

	private final List<String> errors = Collections.synchronizedList(new ArrayList<>());

	/**
	 * @param providers one provider per simulated JVM, all on the store under test
	 */
	public LatchFaultCheck(List<LockProvider> providers) {
		LockOptions defaults = LockOptions.builder()
			.waitTime(Duration.ZERO)
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
		for (LockProvider provider : providers) {
			RenewalScheduler scheduler = new RenewalScheduler();
			this.schedulers.add(scheduler);
			this.templates.add(new DefaultLockTemplate(provider, scheduler, defaults));
		}
	}

	/**
	 * Runs rounds for {@code duration}, with {@code fault} injected after a quarter of it
	 * and healed after three quarters.
	 */
	public Report run(FamilyFault fault, Duration duration) throws InterruptedException {
		long end = System.nanoTime() + duration.toNanos();
		Thread rounds = new Thread(() -> {
			for (int round = 0; System.nanoTime() - end < 0; round++) {
				try {
					round(round, (round % 2 == 0) ? COUNT : COUNT - 1);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}, "family-latch-rounds");
		rounds.start();
		LockSupport.parkNanos(duration.toNanos() / 4);
		fault.inject();
		try {
			LockSupport.parkNanos(duration.toNanos() / 2);
		}
		finally {
			fault.heal();
		}
		rounds.join(duration.plusSeconds(60).toMillis());
		if (rounds.isAlive()) {
			this.errors.add("the rounds did not finish");
			rounds.interrupt();
		}
		return new Report(fault.toString(),
				this.outcomes.entrySet()
					.stream()
					.collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, (e) -> e.getValue().get())),
				List.copyOf(this.early), List.copyOf(this.errors));
	}

	private void round(int round, int participants) throws InterruptedException {
		String key = this.prefix + round;
		AtomicLongArray firstCall = new AtomicLongArray(COUNT);
		List<Thread> threads = new ArrayList<>();
		long[] opened = new long[this.templates.size()];
		Duration wait = Duration.ofSeconds((participants == COUNT) ? 10 : 1);
		for (int w = 0; w < this.templates.size(); w++) {
			int waiter = w;
			threads.add(new Thread(() -> {
				DistributedLatch latch = join(this.templates.get(waiter), key);
				if (latch == null) {
					return;
				}
				try {
					if (latch.await(wait)) {
						opened[waiter] = System.nanoTime();
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				catch (LockBackendException | IllegalStateException ex) {
					count("waiter saw a store failure or a gone latch");
				}
			}));
		}
		for (int p = 0; p < participants; p++) {
			int participant = p;
			threads.add(new Thread(() -> {
				DistributedLatch latch = join(this.templates.get(participant % this.templates.size()), key);
				if (latch == null) {
					return;
				}
				firstCall.compareAndSet(participant, 0, System.nanoTime());
				countDownWithRetries(latch, "participant-" + participant);
				countDownWithRetries(latch, "participant-" + participant);
			}));
		}
		threads.forEach(Thread::start);
		for (Thread thread : threads) {
			thread.join(wait.plusSeconds(30).toMillis());
		}
		long lastFirstCall = 0;
		for (int p = 0; p < COUNT; p++) {
			lastFirstCall = (firstCall.get(p) == 0) ? Long.MAX_VALUE : Math.max(lastFirstCall, firstCall.get(p));
		}
		for (int w = 0; w < opened.length; w++) {
			if (opened[w] == 0) {
				count((participants == COUNT) ? "full round, waiter timed out" : "short round, stayed closed");
			}
			else if (participants < COUNT || opened[w] - lastFirstCall < 0) {
				this.early.add("round " + round + " with " + participants + " participants: waiter " + w
						+ " saw the latch open early");
			}
			else {
				count("full round, opened");
			}
		}
	}

	private DistributedLatch join(DefaultLockTemplate template, String key) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() - deadline < 0) {
			try {
				return template.latch(key, COUNT, Duration.ofMinutes(2));
			}
			catch (LockBackendException ex) {
				count("join failed, retried");
			}
			catch (RuntimeException ex) {
				this.errors.add("join: " + ex);
				return null;
			}
		}
		return null;
	}

	private void countDownWithRetries(DistributedLatch latch, String participant) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() - deadline < 0) {
			try {
				count("count-down " + latch.countDown(participant));
				return;
			}
			catch (LockBackendException ex) {
				count("count-down failed, retried");
			}
			catch (RuntimeException ex) {
				this.errors.add("count-down: " + ex);
				return;
			}
		}
	}

	private void count(String outcome) {
		this.outcomes.computeIfAbsent(outcome, (k) -> new AtomicLong()).incrementAndGet();
	}

	/** Closes the templates and their schedulers (not the providers). */
	public void close() {
		this.templates.forEach(DefaultLockTemplate::close);
		this.schedulers.forEach(RenewalScheduler::close);
	}

	/**
	 * What one run saw.
	 *
	 * @param fault the fault's name
	 * @param outcomes events by kind
	 * @param earlyOpenings latches seen open early: must be none
	 * @param errors unexpected exceptions: must be none
	 */
	public record Report(String fault, Map<String, Long> outcomes, List<String> earlyOpenings, List<String> errors) {

		/** Fails, saying what broke, unless every check held and some latches opened. */
		public void assertPassed() {
			if (!this.earlyOpenings.isEmpty() || !this.errors.isEmpty()
					|| this.outcomes.getOrDefault("full round, opened", 0L) == 0) {
				throw new AssertionError("Latch check failed under fault '" + this.fault + "': " + this);
			}
		}

	}

}
