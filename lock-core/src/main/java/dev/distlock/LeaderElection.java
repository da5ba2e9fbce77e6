package dev.distlock;

import java.util.OptionalLong;

/**
 * This instance's candidacy in one leader election: a role per election name, held as a
 * renewed lease on a key derived from the name. Each term is one lease, and its fencing
 * token is the term's token, strictly greater than every earlier term's.
 *
 * <p>
 * The leader stops counting itself leader as soon as it can no longer prove its lease:
 * when no renewal has been confirmed within the renew deadline (shorter than the lease,
 * so before another instance can take the role), or when the lease is known lost. It is
 * then revoked ({@link LeaderListener#revoked}) and campaigns again. A deposed leader
 * that was paused may still be running code it started as leader: only a resource that
 * checks the term's token (a fence) refuses its writes.
 */
public interface LeaderElection {

	/** The election's name, as configured. */
	String name();

	/** This instance's id, as shown to operators. */
	String instanceId();

	/**
	 * Whether this instance leads now: a term was granted, not revoked, and its lease was
	 * confirmed within the renew deadline.
	 */
	boolean isLeader();

	/** The current term's fencing token while this instance leads, else empty. */
	OptionalLong currentToken();

	/**
	 * Hands the role on: if this instance leads, the term is revoked
	 * ({@link LeaderListener.Reason#YIELDED}), its lease released, and this instance does
	 * not campaign again for the yield back-off, so another candidate can take the role.
	 * Does nothing otherwise. Returns at once; {@link #isLeader()} is false from then on.
	 */
	void yield();

}
