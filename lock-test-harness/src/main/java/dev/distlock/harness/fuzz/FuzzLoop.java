package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.support.DefaultLockTemplate;

/**
 * The fuzz workload, run alike in the test JVM and in {@link FuzzWorker}, over any store:
 * threads that, under the lock, read a {@link SharedCounter}, pause, and write it back
 * incremented. Two holders at once lose an increment, which an atomic counter would hide;
 * an occupancy marker (entering must find nobody else inside) counts the overlaps
 * directly. One thread per JVM once holds the lock for longer than its lease, so that
 * only renewal keeps others out. The final counter must equal the sum of
 * {@link Result#successes()} over every JVM.
 */
public final class FuzzLoop {

	/** The lock's key. */
	public static final String LOCK = "fuzz";

	/**
	 * The lease: shorter than the slow hold, and long enough that a loaded machine still
	 * renews it in time (a loss is a failure here).
	 */
	public static final Duration LEASE = Duration.ofMillis(1000);

	/** How long the slow thread holds the lock, once. */
	public static final Duration SLOW_HOLD = Duration.ofMillis(1600);

	/** Every thread's options: wait up to 10 s, renew automatically. */
	public static final LockOptions OPTIONS = LockOptions.builder()
		.waitTime(Duration.ofSeconds(10))
		.leaseTime(LEASE)
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(20))
		.build();

	private final SharedCounter counter;

	private final LongAdder successes = new LongAdder();

	private final LongAdder overlaps = new LongAdder();

	private final LongAdder lost = new LongAdder();

	private final LongAdder timeouts = new LongAdder();

	private final LongAdder errors = new LongAdder();

	private final AtomicReference<Throwable> firstError = new AtomicReference<>();

	private FuzzLoop(SharedCounter counter) {
		this.counter = counter;
	}

	/**
	 * Runs {@code threads} threads for {@code duration}, thread {@code i} locking through
	 * {@code templates[i % size]}.
	 */
	public static Result run(List<? extends LockTemplate> templates, SharedCounter counter, int threads,
			Duration duration) throws InterruptedException {
		FuzzLoop loop = new FuzzLoop(counter);
		long handoversBefore = handovers(templates);
		long start = System.nanoTime();
		long end = start + duration.toNanos();
		long slowAt = start + duration.toNanos() / 3;
		List<Thread> workers = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			LockTemplate template = templates.get(i % templates.size());
			boolean slow = (i == 0);
			Thread worker = new Thread(() -> loop.work(template, end, slow ? slowAt : Long.MAX_VALUE), "fuzz-" + i);
			workers.add(worker);
			worker.start();
		}
		for (Thread worker : workers) {
			worker.join(duration.plus(OPTIONS.waitTime()).plusSeconds(10).toMillis());
			if (worker.isAlive()) {
				throw new IllegalStateException(worker.getName() + " did not finish");
			}
		}
		Throwable error = loop.firstError.get();
		return new Result(loop.successes.sum(), loop.overlaps.sum(), loop.lost.sum(), loop.timeouts.sum(),
				loop.errors.sum(), handovers(templates) - handoversBefore, (error != null) ? error.toString() : "none");
	}

	/** Local hand-overs so far of the templates that count them. */
	private static long handovers(List<? extends LockTemplate> templates) {
		long count = 0;
		for (LockTemplate template : templates) {
			if (template instanceof DefaultLockTemplate counted) {
				count += counted.localHandovers();
			}
		}
		return count;
	}

	private void work(LockTemplate template, long end, long slowAt) {
		boolean slowDone = false;
		while (System.nanoTime() - end < 0) {
			boolean slow = !slowDone && System.nanoTime() - slowAt >= 0;
			slowDone |= slow;
			try {
				template.run(LOCK, OPTIONS, () -> increment(slow ? SLOW_HOLD : Duration.ofMillis(1)));
				this.successes.increment();
			}
			catch (LeaseLostException ex) {
				this.lost.increment();
				this.firstError.compareAndSet(null, ex);
			}
			catch (LockAcquisitionException ex) {
				this.timeouts.increment();
			}
			catch (RuntimeException ex) {
				this.errors.increment();
				this.firstError.compareAndSet(null, ex);
			}
		}
	}

	private void increment(Duration pause) {
		long occupants = this.counter.enter();
		try {
			if (occupants != 1) {
				this.overlaps.increment();
			}
			long current = this.counter.read();
			pause(pause);
			this.counter.write(current + 1);
		}
		finally {
			this.counter.exit();
		}
	}

	/**
	 * The work done under the lock: a pause between read and write, where a second holder
	 * would slip in.
	 */
	private static void pause(Duration pause) {
		try {
			TimeUnit.NANOSECONDS.sleep(pause.toNanos());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted inside the lock", ex);
		}
	}

	/**
	 * What one JVM counted; printed by {@link FuzzWorker} as one line.
	 *
	 * @param successes increments that reported success
	 * @param overlaps entries that found another holder inside
	 * @param lost holders told their lease was lost
	 * @param timeouts acquires that timed out
	 * @param errors anything else
	 * @param handovers locks passed between this JVM's threads without a store call
	 * @param firstError the first loss or error, or {@code none}
	 */
	public record Result(long successes, long overlaps, long lost, long timeouts, long errors, long handovers,
			String firstError) {

		/** The prefix of a {@link #line()}. */
		public static final String PREFIX = "RESULT ";

		/** The result as one line of text, for {@link #parse}. */
		public String line() {
			return PREFIX + this.successes + " " + this.overlaps + " " + this.lost + " " + this.timeouts + " "
					+ this.errors + " " + this.handovers + " " + this.firstError;
		}

		/** Reads a {@link #line()} back. */
		public static Result parse(String line) {
			String[] parts = line.substring(PREFIX.length()).split(" ", 7);
			return new Result(Long.parseLong(parts[0]), Long.parseLong(parts[1]), Long.parseLong(parts[2]),
					Long.parseLong(parts[3]), Long.parseLong(parts[4]), Long.parseLong(parts[5]), parts[6]);
		}

	}

}
