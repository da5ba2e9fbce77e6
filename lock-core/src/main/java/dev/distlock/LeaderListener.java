package dev.distlock;

/**
 * Told when this instance is granted or loses the role in a leader election. Called on
 * the election's own thread, in order; a listener should be quick (the renew deadline
 * keeps running). An exception is logged and otherwise ignored.
 */
public interface LeaderListener {

	/**
	 * This instance leads {@code election} from now on, for the term whose fencing token
	 * is {@code token}: pass it to fenced writes.
	 */
	default void granted(LeaderElection election, long token) {
	}

	/**
	 * This instance no longer leads {@code election}: stop acting as leader. Called
	 * before the term's lease is released, so before another instance can be granted the
	 * role through this instance's release.
	 */
	default void revoked(LeaderElection election, long token, Reason reason) {
	}

	/** Why a term ended. */
	enum Reason {

		/**
		 * No renewal of the lease was confirmed within the renew deadline (the store is
		 * slow or unreachable, or this process was paused); the lease may still be held
		 * in the store, and is released.
		 */
		RENEWAL_FAILED,

		/**
		 * The lease is known lost: it expired, another owner holds the key, or the store
		 * reported it lost.
		 */
		LEASE_LOST,

		/** {@link LeaderElection#yield()} handed the role on. */
		YIELDED,

		/** The election stopped (the application shuts down). */
		SHUTDOWN

	}

}
