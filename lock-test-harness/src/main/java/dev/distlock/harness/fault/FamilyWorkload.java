package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;

/**
 * The workload of a read-write lock or semaphore fault run: threads on several templates
 * (each standing for a JVM) that take the read or write side of one key (three reads for
 * each write) or a permit of one semaphore, work briefly, and release; each hold is
 * recorded as a {@link FamilyHold} for {@link FamilyChecks}. The threads never stop on an
 * error, so a fault shows in the holds. All templates run in this JVM, so every hold is
 * on one monotonic clock.
 */
public final class FamilyWorkload {

	private final List<FamilyHold> holds = Collections.synchronizedList(new ArrayList<>());

	private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();

	private final List<Thread> threads = new ArrayList<>();

	private final String key;

	private final int permits;

	private final Duration lease;

	/**
	 * @param key the key every thread locks
	 * @param permits 0 for a read-write lock, else the semaphore's permits
	 * @param lease the lease of every hold (renewed while held)
	 */
	public FamilyWorkload(String key, int permits, Duration lease) {
		this.key = key;
		this.permits = permits;
		this.lease = lease;
	}

	/**
	 * Starts {@code threadsPerTemplate} threads on each template, working until
	 * {@code endNanos}.
	 */
	public void start(List<? extends LockTemplate> templates, int threadsPerTemplate, long endNanos, long seed) {
		for (int t = 0; t < templates.size(); t++) {
			LockTemplate template = templates.get(t);
			int holder = t;
			for (int i = 0; i < threadsPerTemplate; i++) {
				Random random = new Random(seed * 31 + t * 17 + i);
				Thread thread = new Thread(() -> {
					while (System.nanoTime() - endNanos < 0) {
						once(template, holder, random);
						Thread.interrupted();
					}
				}, "family-worker-" + t + "-" + i);
				this.threads.add(thread);
				thread.start();
			}
		}
	}

	/** Waits for every thread; an error naming one that did not finish. */
	public void join(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (Thread thread : this.threads) {
			thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
			if (thread.isAlive()) {
				throw new IllegalStateException(thread.getName() + " did not finish");
			}
		}
	}

	/** The holds recorded. */
	public List<FamilyHold> holds() {
		synchronized (this.holds) {
			return List.copyOf(this.holds);
		}
	}

	/** How the operations ended, counted by outcome ({@code ok}, {@code lost}, ...). */
	public Map<String, AtomicLong> outcomes() {
		return this.outcomes;
	}

	private void once(LockTemplate template, int holder, Random random) {
		FamilyHold.Kind kind = (this.permits > 0) ? FamilyHold.Kind.PERMIT
				: (random.nextInt(4) == 0) ? FamilyHold.Kind.WRITE : FamilyHold.Kind.READ;
		LockOptions.Builder options = LockOptions.builder()
			.leaseTime(this.lease)
			.waitTime(this.lease.multipliedBy(2))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50));
		if (kind == FamilyHold.Kind.READ) {
			options.mode(LockMode.READ);
		}
		if (this.permits > 0) {
			options.permits(this.permits);
		}
		Lease lease;
		try {
			lease = template.acquire(this.key, options.build());
		}
		catch (LockAcquisitionException ex) {
			count("timeout");
			return;
		}
		catch (LockBackendException ex) {
			count("backend: " + ex.getMessage());
			return;
		}
		catch (RuntimeException ex) {
			count("error " + ex);
			return;
		}
		long acquired = System.nanoTime();
		LockSupport.parkNanos(random.nextInt(3_000_000));
		long released = System.nanoTime();
		boolean lost = !lease.isHeld();
		try {
			lease.release();
			count(lost ? "lost" : "ok");
		}
		catch (LeaseLostException ex) {
			lost = true;
			count("lost");
		}
		catch (LockBackendException ex) {
			// The holder could not tell: its hold counts as not excused.
			count("backend on release");
		}
		this.holds.add(new FamilyHold(holder, kind, lease.fencingToken(), acquired, released, lost));
	}

	private void count(String outcome) {
		this.outcomes.computeIfAbsent(outcome, (k) -> new AtomicLong()).incrementAndGet();
	}

}
