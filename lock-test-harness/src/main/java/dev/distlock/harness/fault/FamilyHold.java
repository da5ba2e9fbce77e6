package dev.distlock.harness.fault;

/**
 * One hold of a read-write lock or a semaphore permit in a {@link FamilyWorkload}: who,
 * which side, and when, on the monotonic clock of the JVM that ran every holder.
 *
 * @param holder the template (a simulated JVM) that held it
 * @param kind {@link Kind#READ}, {@link Kind#WRITE} or {@link Kind#PERMIT}
 * @param token the lease's fencing token
 * @param acquiredNanos when the acquire returned
 * @param releasedNanos when the release was called (the holder stopped working)
 * @param lost whether the holder was told its lease was lost (its hold is then no
 * evidence against the lock: it knew)
 */
public record FamilyHold(int holder, Kind kind, long token, long acquiredNanos, long releasedNanos, boolean lost) {

	/** Which side of the family a hold took. */
	public enum Kind {

		READ, WRITE, PERMIT

	}

	/** Whether the two holds were inside at the same time. */
	boolean overlaps(FamilyHold other) {
		return this.acquiredNanos < other.releasedNanos && other.acquiredNanos < this.releasedNanos;
	}

}
