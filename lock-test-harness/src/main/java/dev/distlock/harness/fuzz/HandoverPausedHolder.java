package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;

/**
 * A holder JVM for any store, to be stopped with {@code SIGSTOP} during a run of local
 * hand-overs: {@link #THREADS} threads take one lock in turn (the lock passes between
 * them in memory, within {@link #UNBOUNDED} bounds), and each holder writes to the
 * {@link FencedRegister} with its token, twice with a pause between, never asking whether
 * it still holds the lock. Once {@link #RUNNING_AFTER} hand-overs have happened it prints
 * {@code RUNNING <hand-overs>}. When a loss is reported it prints
 * {@code LOST <System.nanoTime()>}; after {@link #HOLDS_AFTER_LOSS} more holds (or
 * {@link #MAX_AFTER_LOSS}) it prints
 * {@code DONE <accepted writes of lost holders after the loss> <rejected> <hand-overs>}.
 * <p>
 * Arguments as {@link PausedHolder}.
 */
public final class HandoverPausedHolder {

	/**
	 * Hand-over bounds that never end a run while this JVM is alone: every holder after
	 * the first takes the lock by hand-over, so whoever holds it when the JVM is stopped
	 * holds a token of the first acquisition's block (of a million tokens).
	 */
	public static final HandoverSettings UNBOUNDED = new HandoverSettings(true, 1_000_000, Duration.ofMinutes(10));

	/** Threads that take the lock in turn. */
	public static final int THREADS = 4;

	/** Hand-overs before {@code RUNNING} is printed. */
	public static final int RUNNING_AFTER = 20;

	/** Holds after the loss before the JVM ends. */
	public static final int HOLDS_AFTER_LOSS = 10;

	/** The longest the JVM runs on after the loss. */
	public static final Duration MAX_AFTER_LOSS = Duration.ofSeconds(20);

	private HandoverPausedHolder() {
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		PausedJvm jvm = new PausedJvm(args);
		String key = jvm.key;
		LockOptions options = jvm.options;
		FencedRegister register = jvm.register;
		AtomicLong lostAt = new AtomicLong();
		List<Long> lostTokens = new ArrayList<>();
		DefaultLockTemplate template = jvm.template((lease, reason, holder) -> {
			synchronized (lostTokens) {
				lostTokens.add(lease.fencingToken());
			}
			lostAt.compareAndSet(0, System.nanoTime());
			System.out.println("LOST " + lostAt.get() + " " + lease.fencingToken() + " " + reason);
		}, UNBOUNDED);
		AtomicBoolean running = new AtomicBoolean();
		AtomicLong holdsAfterLoss = new AtomicLong();
		AtomicLong acceptedAfterLoss = new AtomicLong();
		AtomicLong rejected = new AtomicLong();
		AtomicBoolean stop = new AtomicBoolean();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < THREADS; i++) {
			Thread thread = new Thread(() -> {
				while (!stop.get()) {
					try {
						template.run(key, options, () -> {
							long token = LockContext.current().orElseThrow().fencingToken();
							for (int write = 0; write < 2; write++) {
								boolean accepted = register.write(token, "first jvm");
								boolean stale;
								synchronized (lostTokens) {
									stale = lostTokens.contains(token);
								}
								if (!accepted) {
									rejected.incrementAndGet();
								}
								else if (stale) {
									acceptedAfterLoss.incrementAndGet();
								}
								pause();
							}
							if (lostAt.get() != 0) {
								holdsAfterLoss.incrementAndGet();
							}
							if (!running.get() && template.localHandovers() >= RUNNING_AFTER
									&& running.compareAndSet(false, true)) {
								// This holder took the lock by hand-over: it stays,
								// writing with its token without asking, until it is
								// told of the loss, and a few times more.
								System.out.println("RUNNING " + template.localHandovers() + " " + token);
								int afterLoss = 0;
								while (afterLoss < 5) {
									boolean accepted = register.write(token, "first jvm");
									if (!accepted) {
										rejected.incrementAndGet();
									}
									if (lostAt.get() != 0) {
										afterLoss++;
										acceptedAfterLoss.addAndGet(accepted ? 1 : 0);
									}
									pause();
								}
							}
						});
					}
					catch (RuntimeException ex) {
						// Lost leases and timeouts while the other JVM holds: go on.
					}
				}
			}, "holder-" + i);
			threads.add(thread);
			thread.start();
		}
		long deadline = Long.MAX_VALUE;
		while (holdsAfterLoss.get() < HOLDS_AFTER_LOSS) {
			if (lostAt.get() != 0 && deadline == Long.MAX_VALUE) {
				deadline = System.nanoTime() + MAX_AFTER_LOSS.toNanos();
			}
			if (System.nanoTime() - deadline > 0) {
				break;
			}
			TimeUnit.MILLISECONDS.sleep(10);
		}
		stop.set(true);
		for (Thread thread : threads) {
			thread.join(30_000);
		}
		System.out.println("DONE " + acceptedAfterLoss.get() + " " + rejected.get() + " " + template.localHandovers());
		System.out.flush();
		template.close();
		jvm.close();
		System.exit(0);
	}

	private static void pause() {
		try {
			TimeUnit.MILLISECONDS.sleep(1);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
