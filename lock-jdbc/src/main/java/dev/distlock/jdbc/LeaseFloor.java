package dev.distlock.jdbc;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How long a hold's lease lasts at least, on this JVM's monotonic clock: a lease set by a
 * statement sent at {@code t} for {@code lease} runs out on the database's clock no
 * earlier than {@code t + lease}, since the database sets it after the statement arrives.
 * A read hold's or a permit's release that is run again after its reply was lost finds
 * its row gone either way, whether its first run deleted it or the row ran out and was
 * deleted by a taker or the sweep; only the latter can happen once the lease may have run
 * out, so a row found gone before then was deleted by the first run: a release, not a
 * loss.
 */
final class LeaseFloor {

	private final AtomicLong until;

	/**
	 * A floor for a lease of {@code lease} set by a call that began at {@code sentAt}
	 * ({@link System#nanoTime()}).
	 */
	LeaseFloor(long sentAt, Duration lease) {
		this.until = new AtomicLong(sentAt + lease.toNanos());
	}

	/** A renewal for {@code lease}, begun at {@code sentAt}, succeeded. */
	void renewed(long sentAt, Duration lease) {
		long next = sentAt + lease.toNanos();
		this.until.accumulateAndGet(next, (current, candidate) -> (candidate - current > 0) ? candidate : current);
	}

	/**
	 * Whether the lease surely had not run out at {@code nanos}
	 * ({@link System#nanoTime()}).
	 */
	boolean liveAt(long nanos) {
		return nanos - this.until.get() < 0;
	}

}
