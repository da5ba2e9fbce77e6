package dev.distlock.support;

import dev.distlock.LockBackendException;

/** What the template that made a lease hears of it. */
interface LeaseEvents {

	/**
	 * The lease was released (or released after a loss): it is no longer held here.
	 */
	void ended(ManagedLease lease);

	/**
	 * The lock may be free for this JVM's next waiter: released, or known lost.
	 */
	void freed(String key);

	/**
	 * The releasing thread offers the still-held lock to a waiting thread of this JVM
	 * instead of releasing it in the store.
	 * @return whether it was handed over (then nothing is released in the store)
	 */
	default boolean handOver(ManagedLease lease) {
		return false;
	}

	/**
	 * The lock was released in the store, which says that a waiter of another JVM had
	 * marked it: this JVM's waiters let that one go first.
	 */
	default void releasedToOthers(ManagedLease lease) {
	}

	/**
	 * The release in the store failed with {@code failure} (the store could not be
	 * reached): the caller is told, and the release is tried again in the background
	 * ({@link ManagedLease#retryRelease()}).
	 */
	default void releaseFailed(ManagedLease lease, LockBackendException failure) {
	}

}
