package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.distlock.harness.FaultLog;

/**
 * What a {@link FaultScenario} injects with: the store's servers, the seeded
 * {@link FaultLog} that draws and records every fault, the run's end and lease, the
 * workers (to interrupt them, or to stop the worker JVM), and the times the store was
 * hung (for the call-bound checks of {@link FaultReport}).
 *
 * @param <T> the store's servers
 */
public final class FaultSchedule<T extends FaultTarget> {

	private final T target;

	private final FaultLog log;

	private final long endNanos;

	private final Duration lease;

	private final Supplier<List<Thread>> workerThreads;

	private final Consumer<String> worker;

	/**
	 * Start and end of each time the store was hung, as {@code long[2]}; kept by the
	 * injector's thread.
	 */
	private final List<long[]> hangs = new ArrayList<>();

	private long hangStart;

	/**
	 * A schedule until {@code endNanos}; {@code worker} sends a signal ({@code STOP},
	 * {@code CONT}) to the worker JVM.
	 */
	public FaultSchedule(T target, FaultLog log, long endNanos, Duration lease, Supplier<List<Thread>> workerThreads,
			Consumer<String> worker) {
		this.target = target;
		this.log = log;
		this.endNanos = endNanos;
		this.lease = lease;
		this.workerThreads = workerThreads;
		this.worker = worker;
	}

	/** The store's servers. */
	public T target() {
		return this.target;
	}

	/** Draws the schedule's random numbers, and records each fault and its healing. */
	public FaultLog log() {
		return this.log;
	}

	/** When the workers stop, on {@link System#nanoTime()}. */
	public long endNanos() {
		return this.endNanos;
	}

	/** The workload's lease time. */
	public Duration lease() {
		return this.lease;
	}

	/** The workload's lease time in milliseconds. */
	public long leaseMillis() {
		return this.lease.toMillis();
	}

	/** The worker threads of the test JVM. */
	public List<Thread> workerThreads() {
		return this.workerThreads.get();
	}

	/** Whether the workers' end time has passed. */
	public boolean ended() {
		return System.nanoTime() - this.endNanos >= 0;
	}

	/**
	 * Waits a random gap from the schedule; false when the run ends first (leaving time
	 * for one more fault to finish before the workers stop).
	 */
	public boolean pause(long minMillis, long maxMillis) {
		sleep(this.log.millisBetween(minMillis, maxMillis));
		return System.nanoTime() + 3 * this.lease.toNanos() - this.endNanos < 0;
	}

	/**
	 * One fault that lasts: logged, started, left for {@code millis}, ended, logged as
	 * healed.
	 */
	public void stall(String what, long millis, Runnable start, Runnable end) {
		this.log.injected(what + " for " + millis + "ms");
		start.run();
		sleep(millis);
		end.run();
		this.log.healed(what + " over");
	}

	/** Lets the run go on without faults until its end. */
	public void sleepUntilEnd() {
		sleep(Math.max(0, (this.endNanos - System.nanoTime()) / 1_000_000));
	}

	/** The schedule's gaps and fault lengths: time passing is the point here. */
	public void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Fault injector interrupted", ex);
		}
	}

	/** The store has just been stopped: calls sent from now on hang. */
	public void hangStarted() {
		this.hangStart = System.nanoTime();
	}

	/** The store is about to answer again. */
	public void hangEnded() {
		this.hangs.add(new long[] { this.hangStart, System.nanoTime() });
	}

	/** The times the store was hung, for {@link FaultReport}. */
	public List<long[]> hangs() {
		return this.hangs;
	}

	/** Sends {@code signal} ({@code STOP}, {@code CONT}) to the worker JVM. */
	public void signalWorker(String signal) {
		this.worker.accept(signal);
	}

}
