package dev.distlock.support.handover;

import dev.distlock.spi.LockHandle;
import org.jspecify.annotations.Nullable;

/**
 * A lease as local hand-over sees it: the template's lease of one holder of a store
 * acquisition.
 *
 * @param <L> the template's lease type
 */
public interface HandedLease<L extends HandedLease<L>> {

	String key();

	/** The store acquisition; a {@link dev.distlock.spi.TokenBlock} where it may pass. */
	LockHandle handle();

	/** What it was taken with. */
	HandoverTerms terms();

	/** This holder's fencing token. */
	long token();

	/** When the store acquisition this lease continues was sent (monotonic clock). */
	long blockSentNanos();

	/** Nanoseconds until the lease deadline on the monotonic clock; may be negative. */
	long nanosToDeadline();

	/**
	 * The run of hand-overs of its store acquisition, once first handed on; else null.
	 */
	@Nullable HandoverRun run();

	/**
	 * Joins {@code run}, made on the first hand-over; only the releasing thread calls.
	 */
	void joinRun(HandoverRun run);

	/** Starts renewal and the deadline watch of a holder that took the lock over. */
	void start();

	/**
	 * An owner check of the run found the lock gone from the store while this lease holds
	 * it: lost, as a renewal would have found it.
	 */
	void lostInStore(String reason);

}
