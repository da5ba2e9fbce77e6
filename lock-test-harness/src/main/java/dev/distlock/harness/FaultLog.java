package dev.distlock.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The seeded schedule of one fault run and the record of what it did. Every random choice
 * of the run (gaps between faults, their lengths, which fault of a class) comes from
 * {@link #random()}, so a run is replayed by its seed; every fault injected and healed is
 * logged with its time on the monotonic clock ({@link System#nanoTime()}, which on Linux
 * is {@code CLOCK_MONOTONIC} and so comparable across the JVMs of one host). Thread-safe.
 */
public final class FaultLog {

	private final long seed;

	private final Random random;

	private final long startNanos = System.nanoTime();

	private final List<Entry> entries = new ArrayList<>();

	public FaultLog(long seed) {
		this.seed = seed;
		this.random = new Random(seed);
	}

	public long seed() {
		return this.seed;
	}

	/** The run's source of random choices; use it from one thread, the injector's. */
	public Random random() {
		return this.random;
	}

	/** A random duration in {@code [minMillis, maxMillis]}. */
	public long millisBetween(long minMillis, long maxMillis) {
		return minMillis + (long) (this.random.nextDouble() * (maxMillis - minMillis));
	}

	/** Logs a fault that starts now; returns its time in {@link System#nanoTime()}. */
	public long injected(String what) {
		return add(Kind.INJECTED, what);
	}

	/**
	 * Logs that a fault is over (the server answers again, the link passes bytes);
	 * recovery is measured from here.
	 */
	public long healed(String what) {
		return add(Kind.HEALED, what);
	}

	private synchronized long add(Kind kind, String what) {
		long now = System.nanoTime();
		this.entries.add(new Entry(now, kind, what));
		return now;
	}

	public synchronized List<Entry> entries() {
		return List.copyOf(this.entries);
	}

	/** Times of the {@link #healed} entries. */
	public synchronized List<Long> healTimes() {
		return this.entries.stream().filter((entry) -> entry.kind == Kind.HEALED).map(Entry::nanos).toList();
	}

	public synchronized long injectedCount() {
		return this.entries.stream().filter((entry) -> entry.kind == Kind.INJECTED).count();
	}

	/** The log as lines {@code +12.345s injected ...}, relative to the run's start. */
	public synchronized String describe() {
		StringBuilder out = new StringBuilder("seed ").append(this.seed).append('\n');
		for (Entry entry : this.entries) {
			out.append(String.format("+%.3fs %s %s%n", (entry.nanos - this.startNanos) / 1e9,
					entry.kind.name().toLowerCase(java.util.Locale.ROOT), entry.what));
		}
		return out.toString();
	}

	public enum Kind {

		INJECTED, HEALED

	}

	public record Entry(long nanos, Kind kind, String what) {
	}

}
