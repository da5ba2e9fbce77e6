package dev.distlock.harness.fault;

/**
 * One lock operation of the workload as its worker saw it, with times on the monotonic
 * clock ({@link System#nanoTime()}, comparable across the JVMs of one Linux host). A time
 * is 0 where the step was not reached. {@link Workload} records them; {@link FaultReport}
 * checks them. One line of text per operation ({@link #line()}, {@link #parse}) carries
 * them from a worker JVM to the test JVM.
 *
 * @param jvm 0 for the test JVM, 1 for the worker JVM
 * @param key index of the lock key
 * @param token the fencing token, 0 if not acquired
 * @param started when the acquire call began
 * @param acquired when the acquire call returned the lease
 * @param entered when the resource answered the fenced read
 * @param occupancy holders inside the resource, this one included, when it entered
 * @param writeSent when the fenced write was sent
 * @param written 1 accepted, 0 rejected, -1 not sent
 * @param releasing when the release call began (the client-side end of holding)
 * @param fencedOut 1 if the resource refused the holder's entry, 2 if it rejected its
 * write, 0 if neither
 * @param outcome how the operation ended
 * @param lossSignalled whether the holder was told its lease was lost (exception or loss
 * listener)
 * @param ended when the operation's last lock call returned or threw: the acquire's if it
 * failed, the release's otherwise
 */
public record Op(int jvm, int key, long token, long started, long acquired, long entered, long occupancy,
		long writeSent, int written, long releasing, int fencedOut, Outcome outcome, boolean lossSignalled,
		long ended) {

	/** How an operation ended. */
	public enum Outcome {

		/** Entered, wrote, released. */
		OK,
		/** Not acquired within the wait time. */
		TIMEOUT,
		/** Interrupted while waiting or holding. */
		INTERRUPTED,
		/** The store failed or could not be reached. */
		BACKEND,
		/** The lease was lost while held, and the holder was told. */
		LOST,
		/** The resource refused the fenced read: a newer holder had entered. */
		REFUSED,
		/** The resource rejected the fenced write: a newer holder had entered. */
		REJECTED,
		/** Anything else: a bug in the library or the harness. */
		ERROR

	}

	/** Whether the lock was acquired. */
	public boolean held() {
		return this.acquired != 0;
	}

	/** How long the acquire call took, held or not. */
	public long acquireNanos() {
		return (held() ? this.acquired : this.ended) - this.started;
	}

	/** How long the release call took; 0 if the lock was not acquired. */
	public long releaseNanos() {
		return held() ? this.ended - this.releasing : 0;
	}

	/** The operation as one line of text, for {@link #parse}. */
	public String line() {
		return this.jvm + " " + this.key + " " + this.token + " " + this.started + " " + this.acquired + " "
				+ this.entered + " " + this.occupancy + " " + this.writeSent + " " + this.written + " " + this.releasing
				+ " " + this.fencedOut + " " + this.outcome + " " + this.lossSignalled + " " + this.ended;
	}

	/** Reads a {@link #line()} back. */
	public static Op parse(String line) {
		String[] f = line.split(" ");
		return new Op(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3]),
				Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]),
				Integer.parseInt(f[8]), Long.parseLong(f[9]), Integer.parseInt(f[10]), Outcome.valueOf(f[11]),
				Boolean.parseBoolean(f[12]), Long.parseLong(f[13]));
	}

}
