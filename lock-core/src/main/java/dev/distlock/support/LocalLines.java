package dev.distlock.support;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * This JVM's local lines ({@link LocalQueue}), one per key and side: the write (plain)
 * side under the key itself, the read side and the semaphore under the key with a suffix
 * no key has. A line exists while callers use it.
 */
final class LocalLines {

	/** Suffix of a read line's name. */
	private static final String READ_LINE = "\0read";

	/** Suffix of a semaphore line's name. */
	private static final String PERMIT_LINE = "\0permits";

	final ConcurrentMap<String, LocalQueue> queues = new ConcurrentHashMap<>();

	/** Ends a lock left for a line that emptied, which nobody takes over. */
	private final Consumer<ManagedLease> orphaned;

	LocalLines(Consumer<ManagedLease> orphaned) {
		this.orphaned = orphaned;
	}

	/** The name of the line a caller with {@code settings} joins for {@code key}. */
	static String line(String key, LockSettings settings) {
		return switch (settings.kind()) {
			case PERMITS -> key + PERMIT_LINE;
			case SHARED -> key + READ_LINE;
			default -> key;
		};
	}

	/** Joins line {@code line}, made if nobody uses it. */
	LocalQueue join(String line) {
		return this.queues.compute(line, (k, queue) -> {
			LocalQueue joined = (queue != null) ? queue : new LocalQueue(line.endsWith(READ_LINE));
			joined.users++;
			return joined;
		});
	}

	/**
	 * Leaves line {@code line}; the last caller to leave removes it, ending a lock left
	 * for it that nobody took over.
	 */
	void leave(String line) {
		ManagedLease[] orphan = new ManagedLease[1];
		this.queues.computeIfPresent(line, (k, current) -> {
			if (--current.users > 0) {
				return current;
			}
			orphan[0] = current.handover().takeOffer();
			return null;
		});
		if (orphan[0] != null) {
			this.orphaned.accept(orphan[0]);
		}
	}

	/**
	 * Every line of the key: a freed write lock lets readers in, a freed read hold may
	 * let a writer in; a freed permit wakes the semaphore's line (and costs the lock's
	 * line of the same key at most a spurious look).
	 */
	void freed(String key) {
		signal(key);
		signal(key + READ_LINE);
		signal(key + PERMIT_LINE);
	}

	private void signal(String line) {
		LocalQueue queue = this.queues.get(line);
		if (queue != null) {
			queue.signal();
		}
	}

	/** The write line of {@code key}, if anyone uses it. */
	@Nullable LocalQueue writeLine(String key) {
		return this.queues.get(key);
	}

	/** Keys with callers acquiring or waiting. */
	int size() {
		return this.queues.size();
	}

	/** Callers acquiring or waiting, per key and side. A snapshot. */
	Map<String, Integer> waiting() {
		Map<String, Integer> waiting = new TreeMap<>();
		this.queues.forEach((line, queue) -> waiting
			.merge(line.replace(READ_LINE, " (read)").replace(PERMIT_LINE, " (permits)"), queue.users, Integer::sum));
		return waiting;
	}

}
