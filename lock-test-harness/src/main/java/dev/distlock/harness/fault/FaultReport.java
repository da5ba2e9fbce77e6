package dev.distlock.harness.fault;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

import dev.distlock.harness.fault.Op.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checkers of a fault run, over the operations every JVM recorded, and the table row
 * they make. Overlaps come from the holders' own intervals (from the acquire's reply to
 * the release call, which lie inside the real holding times, so an overlap found is real)
 * and, independently, from the resource's occupancy counter. A write is stale when a
 * holder that began to acquire after its writer held the lock had entered the resource
 * before it was sent; fencing must reject every such write. And a holder may be fenced
 * out only by a newer one: one that entered with a greater token and whose acquire
 * returned after this holder began to acquire. A holder fenced out by an older one means
 * tokens went backwards (a counter lost without the clock floor, say).
 *
 * <p>
 * Where the lock connections keep the client's defaults, so that only the store timeout
 * (the provider's {@link dev.distlock.spi.LockProvider#callTimeout() call timeout})
 * bounds a call, every call is checked against that bound: an acquire ends within its
 * wait time plus one store timeout, a release within one store timeout (each with
 * {@link #SLACK} for a busy host). And an acquire that began after the store was stopped
 * and ended before it ran again, late enough that a store call would have been found
 * hung, must end as a backend error: a wait timeout there means a store that did not
 * answer was reported as a busy lock.
 *
 * <p>
 * Lost updates are the accepted writes the resource counted less its final value, per
 * key; leaks are added up by the run ({@link Workload.Leaks} of each JVM and
 * {@link FaultTarget#leftInStore}). A count of -1 means "not checked" for this fault.
 * {@link #header()} and {@link #row()} make the Markdown table of a suite.
 *
 * @param fault the fault class's name
 * @param inModel whether it lies inside the fault model ({@link FaultScenario#inModel()})
 * @param localHandovers locks passed between threads of one JVM without a store call, in
 * both JVMs together ({@link dev.distlock.support.HandoverSettings}); -1 where the store
 * or the workload (fair locks) never hands over
 */
public record FaultReport(String fault, boolean inModel, long seed, long seconds, long operations,
		Map<Outcome, Long> outcomes, long overlaps, long crowdedEntries, long staleHolders, long staleHoldersSignalled,
		long staleWritesRejected, long staleWritesAccepted, long wronglyFenced, long lostUpdates, long leaks,
		String leakDetail, long[] recoveryMillis, long faultsInjected, List<String> errors, List<String> unsignalled,
		long callsOverBound, long busyWhileHung, List<String> boundViolations, long localHandovers) {

	/** What a busy host may add to a call's bound. */
	public static final Duration SLACK = Duration.ofSeconds(2);

	/**
	 * Checks everything one run recorded.
	 * @param fault the fault class run
	 * @param lease the workload's lease time
	 * @param storeTimeout the provider's call timeout
	 * @param acceptedPerKey writes the resource accepted, per key index
	 * @param valuePerKey the resource's final value, per key index
	 * @param healTimes when each fault was healed, for the recovery times
	 * @param hangs start and end of each time the store was hung
	 */
	public static FaultReport check(FaultScenario<?> fault, Duration lease, Duration storeTimeout, long seed,
			long seconds, List<Op> ops, long[] acceptedPerKey, long[] valuePerKey, long leaks, String leakDetail,
			List<Long> healTimes, long faultsInjected, List<String> errors, List<long[]> hangs) {
		Map<Outcome, Long> outcomes = new EnumMap<>(Outcome.class);
		for (Outcome outcome : Outcome.values()) {
			outcomes.put(outcome, 0L);
		}
		ops.forEach((op) -> outcomes.merge(op.outcome(), 1L, Long::sum));
		long overlaps = 0;
		long staleHolders = 0;
		long signalled = 0;
		long staleRejected = 0;
		long staleAccepted = 0;
		long wronglyFenced = 0;
		List<String> unsignalled = new ArrayList<>();
		int keys = acceptedPerKey.length;
		for (int key = 0; key < keys; key++) {
			int k = key;
			List<Op> held = new ArrayList<>(ops.stream().filter((op) -> op.key() == k && op.held()).toList());
			held.sort(Comparator.comparingLong(Op::acquired));
			PriorityQueue<Op> active = new PriorityQueue<>(Comparator.comparingLong(Op::releasing));
			java.util.Set<Op> stale = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
			for (Op op : held) {
				while (!active.isEmpty() && active.peek().releasing() - op.acquired() <= 0) {
					active.poll();
				}
				if (!active.isEmpty()) {
					overlaps++;
					for (Op holder : active) {
						// Of two overlapping holders, the one with the smaller token
						// held the lock first in the store: the other could only take
						// it once that one's had gone. (Its acquire reply may still
						// have come back later.)
						Op older = (holder.token() < op.token()) ? holder : op;
						Op newer = (older == holder) ? op : holder;
						if (stale.add(older) && !older.lossSignalled() && unsignalled.size() < 5) {
							unsignalled.add("stale " + older.line() + " overlapped by " + newer.line());
						}
					}
				}
				active.add(op);
			}
			staleHolders += stale.size();
			signalled += stale.stream().filter(Op::lossSignalled).count();
			// Entrants by the start of their acquire, with the earliest admitted entry
			// among them and all who started later.
			List<Op> entrants = new ArrayList<>(held.stream()
				.filter((op) -> op.entered() != 0 && op.outcome() != Outcome.REFUSED)
				.sorted(Comparator.comparingLong(Op::started))
				.toList());
			long[] starts = entrants.stream().mapToLong(Op::started).toArray();
			long[] earliestEntryFrom = new long[entrants.size() + 1];
			earliestEntryFrom[entrants.size()] = Long.MAX_VALUE;
			for (int i = entrants.size() - 1; i >= 0; i--) {
				earliestEntryFrom[i] = Math.min(earliestEntryFrom[i + 1], entrants.get(i).entered());
			}
			// A holder is fenced out by a newer one: admitted with a greater token, its
			// acquire returned after this holder began to acquire and before the refusal
			// (or the rejected write) came back, since its entry was applied first.
			List<Op> admitted = held.stream().filter((op) -> op.entered() != 0 && op.fencedOut() != 1).toList();
			long[] returns = admitted.stream().mapToLong(Op::acquired).toArray();
			for (Op op : held) {
				if (op.fencedOut() != 0) {
					long until = (op.fencedOut() == 1) ? op.entered() : op.releasing();
					boolean newer = false;
					for (int i = firstAfter(returns, op.started()); i < returns.length && returns[i] < until; i++) {
						newer |= admitted.get(i).token() > op.token();
					}
					if (!newer) {
						wronglyFenced++;
					}
				}
				if (op.written() < 0) {
					continue;
				}
				int from = firstAfter(starts, op.acquired());
				if (earliestEntryFrom[from] - op.writeSent() < 0) {
					if (op.written() == 1) {
						staleAccepted++;
					}
					else {
						staleRejected++;
					}
				}
			}
		}
		long crowded = ops.stream().filter((op) -> op.occupancy() > 1).count();
		long lostUpdates = 0;
		for (int key = 0; key < keys; key++) {
			lostUpdates += acceptedPerKey[key] - valuePerKey[key];
		}
		long[] recovery = recovery(ops, healTimes);
		List<String> boundViolations = new ArrayList<>();
		long overBound = fault.clientDefaults() ? callsOverBound(ops, lease, storeTimeout, boundViolations) : -1;
		long busyWhileHung = fault.clientDefaults() ? busyWhileHung(ops, hangs, storeTimeout, boundViolations) : -1;
		return new FaultReport(fault.name(), fault.inModel(), seed, seconds, ops.size(), outcomes, overlaps, crowded,
				staleHolders, signalled, staleRejected, staleAccepted, wronglyFenced, lostUpdates, leaks, leakDetail,
				recovery, faultsInjected, errors, unsignalled, overBound, busyWhileHung, boundViolations, -1);
	}

	/**
	 * This report with the count of local hand-overs, -1 where none could happen. A run
	 * on a store that hands over must have done so, so that it proves the checks with
	 * hand-over on.
	 */
	public FaultReport withLocalHandovers(long count) {
		return new FaultReport(this.fault, this.inModel, this.seed, this.seconds, this.operations, this.outcomes,
				this.overlaps, this.crowdedEntries, this.staleHolders, this.staleHoldersSignalled,
				this.staleWritesRejected, this.staleWritesAccepted, this.wronglyFenced, this.lostUpdates, this.leaks,
				this.leakDetail, this.recoveryMillis, this.faultsInjected, this.errors, this.unsignalled,
				this.callsOverBound, this.busyWhileHung, this.boundViolations, count);
	}

	/**
	 * Acquires and releases that outlasted their bound; the first few go to
	 * {@code samples}.
	 */
	private static long callsOverBound(List<Op> ops, Duration lease, Duration storeTimeout, List<String> samples) {
		long acquireBound = Workload.waitTime(lease).plus(storeTimeout).plus(SLACK).toNanos();
		long releaseBound = storeTimeout.plus(SLACK).toNanos();
		long over = 0;
		for (Op op : ops) {
			if (op.acquireNanos() > acquireBound) {
				over++;
				sample(samples, "acquire took " + op.acquireNanos() / 1_000_000 + "ms: " + op.line());
			}
			if (op.releaseNanos() > releaseBound) {
				over++;
				sample(samples, "release took " + op.releaseNanos() / 1_000_000 + "ms: " + op.line());
			}
		}
		return over;
	}

	/**
	 * Acquires reported as wait timeouts that began after the store was stopped and ended
	 * while it still was, at least a store timeout into the stop (by then the store was
	 * found hung, whoever asked first).
	 */
	private static long busyWhileHung(List<Op> ops, List<long[]> hangs, Duration timeout, List<String> samples) {
		long storeTimeout = timeout.toNanos();
		long busy = 0;
		for (Op op : ops) {
			if (op.outcome() != Outcome.TIMEOUT) {
				continue;
			}
			for (long[] hang : hangs) {
				if (op.started() - hang[0] >= 0 && hang[1] - op.ended() >= 0 && op.ended() - hang[0] >= storeTimeout) {
					busy++;
					sample(samples,
							"wait timeout " + (op.started() - hang[0]) / 1_000_000 + "ms to "
									+ (op.ended() - hang[0]) / 1_000_000 + "ms into a stop of "
									+ (hang[1] - hang[0]) / 1_000_000 + "ms: " + op.line());
				}
			}
		}
		return busy;
	}

	private static void sample(List<String> samples, String line) {
		if (samples.size() < 5) {
			samples.add(line);
		}
	}

	private static int firstAfter(long[] sorted, long value) {
		int index = Arrays.binarySearch(sorted, value + 1);
		if (index < 0) {
			return -index - 1;
		}
		while (index > 0 && sorted[index - 1] > value) {
			index--;
		}
		return index;
	}

	/** Per heal, the time until the next lock was acquired, in ms, sorted. */
	private static long[] recovery(List<Op> ops, List<Long> healTimes) {
		long[] acquired = ops.stream().filter(Op::held).mapToLong(Op::acquired).sorted().toArray();
		return healTimes.stream().mapToLong((heal) -> {
			int index = firstAfter(acquired, heal);
			return (index < acquired.length) ? (acquired[index] - heal) / 1_000_000 : -1;
		}).filter((millis) -> millis >= 0).sorted().toArray();
	}

	/**
	 * The checks every fault class must pass, with this report in every message: some
	 * operation succeeded; none ended in {@link Outcome#ERROR}; no stale write was
	 * accepted; nobody was fenced out by an older holder; no update was lost; nothing
	 * leaked. Where the client keeps its defaults, every call kept its bound and no hung
	 * store was reported as a busy lock. Where the fault does not make the store fail, no
	 * backend error. Inside the fault model, no overlap and no crowded entry; outside it,
	 * every stale holder was told of its loss.
	 * @throws AssertionError naming the first check that failed
	 */
	public void assertPassed(FaultScenario<?> scenario) {
		String why = row() + "\nleaks: " + this.leakDetail + "\nerrors: " + this.errors + "\nstale holders not told: "
				+ this.unsignalled + "\ncalls over their bound: " + this.boundViolations;
		assertThat(count(Outcome.OK)).as(why).isPositive();
		assertThat(count(Outcome.ERROR)).as(why).isZero();
		assertThat(this.staleWritesAccepted).as(why).isZero();
		assertThat(this.wronglyFenced).as(why).isZero();
		assertThat(this.lostUpdates).as(why).isZero();
		assertThat(this.leaks).as(why).isZero();
		if (this.localHandovers >= 0) {
			assertThat(this.localHandovers).as("local hand-overs: " + why).isPositive();
		}
		if (scenario.clientDefaults()) {
			assertThat(this.callsOverBound).as(why).isZero();
			assertThat(this.busyWhileHung).as(why).isZero();
		}
		if (!scenario.storeFails()) {
			assertThat(count(Outcome.BACKEND)).as(why).isZero();
		}
		if (scenario.inModel()) {
			assertThat(this.overlaps).as(why).isZero();
			assertThat(this.crowdedEntries).as(why).isZero();
		}
		else {
			assertThat(this.staleHoldersSignalled).as(why).isEqualTo(this.staleHolders);
		}
	}

	/**
	 * The Markdown table of {@code reports}, with a closing line on the operations run,
	 * written to {@code out} and returned.
	 */
	public static String writeTable(List<FaultReport> reports, String closing, Path out) throws IOException {
		StringBuilder table = new StringBuilder(header()).append('\n');
		long operations = 0;
		for (FaultReport report : reports) {
			table.append(report.row()).append('\n');
			operations += report.operations();
		}
		table.append("\n").append(operations).append(" lock operations, ").append(closing).append('\n');
		Files.createDirectories(out.toAbsolutePath().getParent());
		Files.writeString(out, table);
		return table.toString();
	}

	/** Operations that ended with {@code outcome}. */
	public long count(Outcome outcome) {
		return this.outcomes.get(outcome);
	}

	/** Operations that did not end {@link Outcome#OK}. */
	public long failed() {
		return this.operations - count(Outcome.OK);
	}

	/** The Markdown table's header, for {@link #row()}. */
	public static String header() {
		return "| fault | model | ops | ok | timeout | interrupted | backend | lost | refused | rejected | error "
				+ "| overlaps | crowded | stale holders signalled | stale writes rejected / accepted | wrongly fenced "
				+ "| lost updates | leaks | calls over bound / busy while hung "
				+ "| recovery ms p50 / p99 / max (n) | faults | seed | local hand-overs |\n"
				+ "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
				+ "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |";
	}

	/** The run as one row of the Markdown table. */
	public String row() {
		return "| " + this.fault.toLowerCase(java.util.Locale.ROOT).replace('_', '-') + " | "
				+ (this.inModel ? "in" : "outside") + " | " + this.operations + " | " + count(Outcome.OK) + " | "
				+ count(Outcome.TIMEOUT) + " | " + count(Outcome.INTERRUPTED) + " | " + count(Outcome.BACKEND) + " | "
				+ count(Outcome.LOST) + " | " + count(Outcome.REFUSED) + " | " + count(Outcome.REJECTED) + " | "
				+ count(Outcome.ERROR) + " | " + this.overlaps + " | " + this.crowdedEntries + " | "
				+ this.staleHoldersSignalled + " / " + this.staleHolders + " | " + this.staleWritesRejected + " / "
				+ this.staleWritesAccepted + " | " + this.wronglyFenced + " | " + this.lostUpdates + " | " + this.leaks
				+ " | " + boundText() + " | " + recoveryText() + " | " + this.faultsInjected + " | " + this.seed + " | "
				+ ((this.localHandovers < 0) ? "-" : Long.toString(this.localHandovers)) + " |";
	}

	/** "-" where the class does not check the store timeout's bound. */
	private String boundText() {
		return (this.callsOverBound < 0) ? "-" : this.callsOverBound + " / " + this.busyWhileHung;
	}

	private String recoveryText() {
		long[] r = this.recoveryMillis;
		if (r.length == 0) {
			return "n/a";
		}
		return percentile(r, 50) + " / " + percentile(r, 99) + " / " + r[r.length - 1] + " (" + r.length + ")";
	}

	private static long percentile(long[] sorted, int percent) {
		int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
	}

}
