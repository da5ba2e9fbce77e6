package dev.distlock.harness.fault;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import dev.distlock.harness.fault.FamilyOp.Kind;

/**
 * The family's checkers over the merged events of both JVMs of a {@link FamilyFaultRun},
 * and the table row they make:
 * <ul>
 * <li>never a writer alongside a reader or another writer
 * ({@link FamilyChecks#writerAlongsideOthers});</li>
 * <li>never more than {@link FamilyFaultWorkload#PERMITS} permit holders
 * ({@link FamilyChecks#moreThanPermits});</li>
 * <li>never a partial multi-key lock: no key of the multi-key locks held by two holders
 * (multi-key or plain) at once;</li>
 * <li>a latch never opened early: a waiter saw it open only in a round with three
 * participants, after the third one's first call began;</li>
 * <li>no lost update on the fenced resource (writers and multi-key holders), and nothing
 * left behind in either JVM or in the store.</li>
 * </ul>
 * As for the mutex ({@link FaultReport}), inside the fault model every overlap counts;
 * outside it, an overlap is allowed only where the older holder was told its lease was
 * lost, and its writes must have been caught by fencing (no lost update).
 *
 * @param fault the fault class's name
 * @param inModel whether it lies inside the fault model
 * @param seed the run's seed
 * @param outcomes events by kind and outcome, for instance {@code WRITE ok}
 * @param violations what broke a safety check, each with the holds involved
 * @param maxPermitHolders the most permit holders inside at once
 * @param latchOpened waiters that saw a full round's latch open
 * @param lostUpdates accepted writes less final values, over the fenced keys
 * @param leaks what both JVMs and the store left behind
 * @param leakDetail where the leaks are
 * @param errors unexpected exceptions and worker JVM errors
 * @param faultsInjected faults the schedule injected
 */
public record FamilyFaultReport(String fault, boolean inModel, long seed, Map<String, Long> outcomes,
		List<String> violations, int maxPermitHolders, long latchOpened, long lostUpdates, long leaks,
		String leakDetail, List<String> errors, long faultsInjected) {

	/**
	 * Checks the merged events of a run.
	 * @param accepted per fenced key (the read-write key, then the multi-key keys), the
	 * writes the resource accepted
	 * @param values per fenced key, the resource's final value
	 */
	static FamilyFaultReport check(FaultScenario<?> fault, long seed, List<FamilyOp> ops, long[] accepted,
			long[] values, long leaks, String leakDetail, List<String> errors, long faultsInjected) {
		boolean excusable = !fault.inModel();
		Map<String, Long> outcomes = new TreeMap<>();
		for (FamilyOp op : ops) {
			outcomes.merge(op.kind() + " " + op.outcome(), 1L, Long::sum);
			if (op.fence() == 2) {
				// a writer's or multi-key holder's write refused or rejected by fencing
				outcomes.merge("fenced out", 1L, Long::sum);
			}
		}
		List<String> violations = new ArrayList<>();
		List<FamilyHold> rw = new ArrayList<>();
		List<FamilyHold> permits = new ArrayList<>();
		Map<Integer, List<FamilyHold>> byKey = new HashMap<>();
		for (FamilyOp op : ops) {
			if (!op.held()) {
				continue;
			}
			switch (op.kind()) {
				case READ -> rw.add(op.hold(FamilyHold.Kind.READ, excusable));
				case WRITE -> rw.add(op.hold(FamilyHold.Kind.WRITE, excusable));
				case PERMIT -> permits.add(op.hold(FamilyHold.Kind.PERMIT, excusable));
				default -> byKey.computeIfAbsent(op.key(), (k) -> new ArrayList<>())
					.add(op.hold(FamilyHold.Kind.WRITE, excusable));
			}
		}
		violations.addAll(FamilyChecks.writerAlongsideOthers(rw));
		List<String> permitCheck = FamilyChecks.moreThanPermits(permits, FamilyFaultWorkload.PERMITS);
		violations.addAll(permitCheck.subList(0, permitCheck.size() - 1));
		// Every key of the multi-key locks is exclusive: a plain lock and a multi-key
		// lock on it are the same lock.
		byKey.forEach((key, holds) -> FamilyChecks.writerAlongsideOthers(holds)
			.forEach((v) -> violations.add("key " + key + " held twice: " + v)));
		long opened = latchOpenings(ops, violations);
		long lost = 0;
		for (int i = 0; i < accepted.length; i++) {
			lost += accepted[i] - values[i];
		}
		return new FamilyFaultReport(fault.name(), fault.inModel(), seed, outcomes, violations,
				FamilyChecks.maxInside(permitCheck), opened, lost, leaks, leakDetail, errors, faultsInjected);
	}

	/** Openings seen; the early ones go to {@code violations}. */
	private static long latchOpenings(List<FamilyOp> ops, List<String> violations) {
		Map<Integer, long[]> firstCalls = new HashMap<>();
		for (FamilyOp op : ops) {
			if (op.kind() == Kind.LATCH_CALL) {
				long[] calls = firstCalls.computeIfAbsent(op.key(), (k) -> new long[FamilyFaultWorkload.LATCH_COUNT]);
				int participant = (int) op.token();
				if (calls[participant] == 0 || op.acquired() - calls[participant] < 0) {
					calls[participant] = op.acquired();
				}
			}
		}
		long opened = 0;
		for (FamilyOp op : ops) {
			if (op.kind() != Kind.LATCH_AWAIT || !"open".equals(op.outcome())) {
				continue;
			}
			int round = op.key();
			long[] calls = firstCalls.getOrDefault(round, new long[FamilyFaultWorkload.LATCH_COUNT]);
			long last = Long.MIN_VALUE;
			boolean all = true;
			for (long call : calls) {
				all &= call != 0;
				last = (call != 0 && (last == Long.MIN_VALUE || call - last > 0)) ? call : last;
			}
			if (round % 2 != 0 || !all || op.acquired() - last < 0) {
				violations.add("latch of round " + round + " seen open early by JVM " + op.jvm() + " (participants' "
						+ "first calls " + java.util.Arrays.toString(calls) + ", opened at " + op.acquired() + ")");
			}
			else {
				opened++;
			}
		}
		return opened;
	}

	/** Events that ended with {@code kindAndOutcome}, for instance {@code "WRITE ok"}. */
	public long count(String kindAndOutcome) {
		return this.outcomes.getOrDefault(kindAndOutcome, 0L);
	}

	/**
	 * The checks every fault class must pass, with this report in every message: no
	 * safety violation, no lost update, no leak, no unexpected error; every primitive
	 * worked (reads, writes, permits up to the limit, multi-key locks, a latch opened);
	 * no store failure where the fault does not make the store fail.
	 * @throws AssertionError naming what broke
	 */
	public void assertPassed(FaultScenario<?> scenario) {
		List<String> broken = new ArrayList<>(this.violations.subList(0, Math.min(10, this.violations.size())));
		if (this.lostUpdates != 0) {
			broken.add(this.lostUpdates + " lost updates on the fenced resource");
		}
		if (this.leaks != 0) {
			broken.add(this.leaks + " leaks: " + this.leakDetail);
		}
		if (!this.errors.isEmpty()) {
			broken.add("errors: " + this.errors);
		}
		for (String needed : List.of("READ ok", "WRITE ok", "PERMIT ok", "MULTI ok")) {
			if (count(needed) == 0) {
				broken.add("no " + needed);
			}
		}
		if (this.latchOpened == 0) {
			broken.add("no latch opened");
		}
		if (this.maxPermitHolders < 2) {
			broken.add("never more than " + this.maxPermitHolders + " permit holder at once");
		}
		if (!scenario.storeFails()) {
			this.outcomes.forEach((what, count) -> {
				if (what.endsWith(" backend")) {
					broken.add(count + " x " + what + " without a store fault");
				}
			});
		}
		if (!broken.isEmpty()) {
			throw new AssertionError("Family fault run " + this.fault + " (seed " + this.seed + ") failed: "
					+ (this.violations.size() > 10 ? this.violations.size() + " violations, first: " : "") + broken
					+ "\n" + row() + "\noutcomes: " + this.outcomes);
		}
	}

	/** The Markdown table's header, for {@link #row()}. */
	public static String header() {
		return "| fault | model | read / write ok | permits ok (max inside) | multi / plain ok | latches opened "
				+ "| lost (told) | fenced out | timeouts | backend | violations | lost updates | leaks | faults | seed |\n"
				+ "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |";
	}

	/** The run as one row of the Markdown table. */
	public String row() {
		return "| " + this.fault.toLowerCase(Locale.ROOT).replace('_', '-') + " | " + (this.inModel ? "in" : "outside")
				+ " | " + count("READ ok") + " / " + count("WRITE ok") + " | " + count("PERMIT ok") + " ("
				+ this.maxPermitHolders + ") | " + count("MULTI ok") + " / " + count("PLAIN ok") + " | "
				+ this.latchOpened + " | " + sum(" lost") + " | " + count("fenced out") + " | " + sum(" timeout")
				+ " | " + sum(" backend") + " | " + this.violations.size() + " | " + this.lostUpdates + " | "
				+ this.leaks + " | " + this.faultsInjected + " | " + this.seed + " |";
	}

	private long sum(String outcomeSuffix) {
		return this.outcomes.entrySet()
			.stream()
			.filter((e) -> e.getKey().endsWith(outcomeSuffix))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	/** The Markdown table of {@code reports}, written to {@code out} and returned. */
	public static String writeTable(List<FamilyFaultReport> reports, String closing, Path out) throws IOException {
		StringBuilder table = new StringBuilder(header()).append('\n');
		reports.forEach((report) -> table.append(report.row()).append('\n'));
		table.append('\n').append(closing).append('\n');
		Files.createDirectories(out.toAbsolutePath().getParent());
		Files.writeString(out, table);
		return table.toString();
	}

}
