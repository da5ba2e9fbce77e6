package dev.distlock;

import java.util.Collection;
import java.util.Optional;

/**
 * One hot resource (the stock of a best-selling item) split into N segments, each with
 * its own lock, so that N callers can work on it at once instead of queueing on one lock.
 * Obtained from {@link LockTemplate#segmented}. Segment {@code i} is locked as the plain
 * key {@link #segmentKey(int)}, with every guarantee of a plain lock (fencing token,
 * renewal, loss never silent).
 *
 * <p>
 * The usual way in is {@link #take}: it takes one free segment, chosen so that callers
 * spread over the segments (a random start, segments held in this JVM tried last) and
 * skipping segments known to be empty; if that segment does not hold enough, it takes
 * several segments, all or none and in sorted order (so two such callers cannot deadlock
 * or livelock), and draws from them in order. The quantities themselves live wherever the
 * application keeps them ({@link Stock}); the lock only decides who may touch which
 * segment.
 *
 * <p>
 * Which segments are empty is this JVM's knowledge: {@link #take} marks a segment empty
 * when it finds it so, and {@link #markAvailable(int)} (for example after a restock)
 * clears the mark. Another JVM's restock is not seen until this one is told, so a restock
 * should reach every instance (or instances should clear marks periodically).
 */
public interface SegmentedLock {

	/** The resource's key, as given to {@link LockTemplate#segmented}. */
	String key();

	/** How many segments the resource is split into. */
	int segments();

	/** The plain lock key of segment {@code segment} (0-based). */
	String segmentKey(int segment);

	/**
	 * Takes one free segment not known to be empty, waiting up to the wait time.
	 * @return empty if every segment is known empty, or none came free in time
	 */
	Optional<SegmentLease> tryAcquireAny(LockOptions options);

	/**
	 * Takes the given segments all at once, in sorted order, as
	 * {@link LockTemplate#acquireAll}.
	 */
	MultiLease acquireSegments(Collection<Integer> segments, LockOptions options);

	/**
	 * Marks {@code segment} as empty: {@link #take} and {@link #tryAcquireAny} skip it.
	 */
	void markEmpty(int segment);

	/** Clears the empty mark of {@code segment}. */
	void markAvailable(int segment);

	/** Whether {@code segment} is marked empty in this JVM. */
	boolean isKnownEmpty(int segment);

	/**
	 * Takes {@code quantity} units from the segments' stock under their locks: from one
	 * segment if one holds enough, else from several, taken together in sorted order.
	 * Never takes more than a segment holds, so the stock never goes below zero.
	 * @return whether the quantity was taken; false if the segments together hold less,
	 * or no segment came free within the wait time
	 */
	boolean take(int quantity, LockOptions options, Stock stock);

	/**
	 * Where the application keeps each segment's quantity. Both methods are called only
	 * while the segment's lock is held, with its lease, whose fencing token a fenced
	 * store should check.
	 */
	interface Stock {

		/** How many units segment {@code segment} holds now. */
		int available(int segment, Lease lease);

		/** Removes {@code quantity} units (never more than available) from a segment. */
		void take(int segment, int quantity, Lease lease);

	}

	/** The lease of one segment. */
	interface SegmentLease extends Lease {

		/** Which segment is held. */
		int segment();

	}

}
