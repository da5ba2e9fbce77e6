package dev.distlock.harness.fault;

/**
 * One event of a cross-JVM family fault run ({@link FamilyFaultWorkload}): a hold of a
 * read-write lock, a semaphore permit or a key of a multi-key lock, an acquire that
 * failed, or a latch participant's first count-down call and a waiter's view of a latch.
 * Times are on the monotonic clock ({@link System#nanoTime()}, comparable across the JVMs
 * of one Linux host). One line of text per event ({@link #line()}, {@link #parse})
 * carries it from the worker JVM to the test JVM.
 *
 * @param jvm 0 for the test JVM, 1 for the worker JVM
 * @param kind what the event is
 * @param key the multi-key lock's key index, or the latch's round; 0 otherwise
 * @param token the fencing token of the hold (of this key, for a multi-key lock); for a
 * latch call, the participant's number
 * @param acquired when the acquire returned (a latch: when the call began, or the waiter
 * saw the latch open); 0 if not acquired
 * @param released when the holder stopped working and called release
 * @param lost whether the holder was told its lease was lost (exception or loss listener)
 * @param fence for a writer or a multi-key hold: 1 its fenced write was accepted, 2 the
 * resource refused or rejected it (a newer holder had entered), 0 none sent
 * @param outcome how it ended ({@code ok}, {@code lost}, {@code timeout},
 * {@code backend}, {@code interrupted}, {@code error}, {@code open}, {@code shut}...), no
 * spaces
 */
public record FamilyOp(int jvm, Kind kind, int key, long token, long acquired, long released, boolean lost, int fence,
		String outcome) {

	/** What an event is. */
	public enum Kind {

		/** A read hold of the read-write lock. */
		READ,
		/** A write hold of the read-write lock. */
		WRITE,
		/** A permit of the semaphore. */
		PERMIT,
		/** One key of a multi-key lock. */
		MULTI,
		/** A plain lock on one key of the multi-key locks' keys. */
		PLAIN,
		/** A latch participant's first count-down call of a round. */
		LATCH_CALL,
		/**
		 * A latch waiter's outcome in a round: {@code open} (at {@code acquired}), else
		 * not.
		 */
		LATCH_AWAIT

	}

	/** Whether the lock was acquired. */
	public boolean held() {
		return this.acquired != 0 && this.kind.ordinal() <= Kind.PLAIN.ordinal();
	}

	/** The hold as the family checks see it. */
	FamilyHold hold(FamilyHold.Kind as, boolean excusable) {
		return new FamilyHold(this.jvm, as, this.token, this.acquired, this.released, excusable && this.lost);
	}

	/** The event as one line of text, for {@link #parse}. */
	public String line() {
		return this.jvm + " " + this.kind + " " + this.key + " " + this.token + " " + this.acquired + " "
				+ this.released + " " + this.lost + " " + this.fence + " " + this.outcome;
	}

	/** Reads a {@link #line()} back. */
	public static FamilyOp parse(String line) {
		String[] f = line.split(" ");
		return new FamilyOp(Integer.parseInt(f[0]), Kind.valueOf(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]),
				Long.parseLong(f[4]), Long.parseLong(f[5]), Boolean.parseBoolean(f[6]), Integer.parseInt(f[7]), f[8]);
	}

}
