package dev.distlock.harness.fault;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The safety checks of read-write locks and semaphores over the holds a
 * {@link FamilyWorkload} recorded: never a writer alongside a reader or another writer,
 * never more than N permit holders at once. A hold whose holder was told it was lost is
 * excused (the loss was not silent); every other overlap is a violation, reported with
 * both holds.
 */
public final class FamilyChecks {

	private FamilyChecks() {
	}

	/**
	 * Writers that were inside together with a reader or another writer, neither told of
	 * a loss.
	 */
	public static List<String> writerAlongsideOthers(List<FamilyHold> holds) {
		List<FamilyHold> sorted = kept(holds);
		List<String> violations = new ArrayList<>();
		for (int i = 0; i < sorted.size(); i++) {
			FamilyHold first = sorted.get(i);
			for (int j = i + 1; j < sorted.size() && sorted.get(j).acquiredNanos() < first.releasedNanos(); j++) {
				FamilyHold second = sorted.get(j);
				boolean writer = first.kind() == FamilyHold.Kind.WRITE || second.kind() == FamilyHold.Kind.WRITE;
				if (writer && first.overlaps(second)) {
					violations.add("a writer alongside another holder: " + first + " and " + second);
				}
			}
		}
		return violations;
	}

	/**
	 * Moments at which more than {@code permits} holders, none told of a loss, were
	 * inside; also the most holders ever inside at once, as the last line
	 * ({@code "max N"}), so a run can show it reached the limit.
	 */
	public static List<String> moreThanPermits(List<FamilyHold> holds, int permits) {
		List<long[]> events = new ArrayList<>();
		for (FamilyHold hold : kept(holds)) {
			events.add(new long[] { hold.acquiredNanos(), 1 });
			events.add(new long[] { hold.releasedNanos(), -1 });
		}
		// At equal times, leaving comes first: a hand-over is not an overlap.
		events.sort(Comparator.<long[]>comparingLong((event) -> event[0]).thenComparingLong((event) -> event[1]));
		List<String> violations = new ArrayList<>();
		int inside = 0;
		int max = 0;
		for (long[] event : events) {
			inside += (int) event[1];
			max = Math.max(max, inside);
			if (inside > permits) {
				violations.add(inside + " permit holders inside at " + event[0] + " with " + permits + " permits");
			}
		}
		violations.add("max " + max);
		return violations;
	}

	/** The most holders inside at once, from {@link #moreThanPermits}'s last line. */
	public static int maxInside(List<String> moreThanPermits) {
		return Integer.parseInt(moreThanPermits.get(moreThanPermits.size() - 1).substring(4));
	}

	private static List<FamilyHold> kept(List<FamilyHold> holds) {
		return holds.stream()
			.filter((hold) -> !hold.lost())
			.sorted(Comparator.comparingLong(FamilyHold::acquiredNanos))
			.toList();
	}

}
