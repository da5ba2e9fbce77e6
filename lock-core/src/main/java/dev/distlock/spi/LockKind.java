package dev.distlock.spi;

import java.util.Set;

/**
 * The kind of hold a {@link LockRequest} asks for. A store lists the kinds it offers in
 * {@link LockProvider#kinds()}; a request of another kind is refused before it reaches
 * the store, with {@link LockProvider#unsupportedReason(LockKind)} as the reason.
 */
public enum LockKind {

	/**
	 * A plain lock: one holder at a time. On a store that also offers {@link #SHARED}, it
	 * is the writer's side of the key.
	 */
	EXCLUSIVE("Exclusive locks", "a store that offers them"),

	/**
	 * A plain lock whose waiters queue in the store and take it in the order they asked
	 * for it, across JVMs: taken only when it is free and the request's waiter is first
	 * in the key's queue; otherwise the waiter is queued (once) and its place kept for
	 * the request's queue timeout after the attempt, so that a waiter that dies leaves
	 * the queue by itself.
	 */
	FAIR("Fair locks", "a store that queues waiters"),

	/**
	 * A read hold: readers share a key, and the {@link #EXCLUSIVE} lock of a store that
	 * offers this kind is the writer's side of the same key, so a plain lock is busy
	 * while readers hold the key and a read is busy while the plain lock is held. Writers
	 * are preferred: a waiting writer's busy attempts behind readers record its intent
	 * ({@link LockRequest#waiterId()}), and while an intent is recorded no new reader
	 * comes in; an intent lapses by itself when its writer stops asking, after the
	 * request's queue timeout. Every read hold is an acquisition of its own,
	 * owner-checked and expiring on the store's clock; a store that signals releases
	 * signals when the last reader leaves, when a writer releases, and when a writer's
	 * intent ends without the writer taking the key.
	 */
	SHARED("Read locks", "a store that offers them"),

	/**
	 * One permit of a semaphore of {@link LockRequest#permits()} permits. Semaphores live
	 * in a key space of their own: a semaphore and a lock of the same key are unrelated.
	 * A permit is an acquisition like a lock's, with its own owner and fencing token,
	 * expiring on the store's clock unless renewed. The count is stored with the
	 * semaphore: an attempt that declares another count while permits are held fails with
	 * {@link dev.distlock.PermitCountMismatchException}.
	 */
	PERMITS("Semaphores (permits)", "a store that offers them"),

	/**
	 * Several plain locks taken in one attempt, all or none: if one is busy, or the call
	 * fails or is interrupted after some keys were written, those are released
	 * (owner-checked) before the attempt answers. Each key is written exactly as an
	 * {@link #EXCLUSIVE} request writes it and gets the fencing token a plain lock would
	 * get.
	 */
	MULTI("Multi-key locks", "a store that takes several locks in one attempt");

	/** What the smallest store offers: exclusive locks only. */
	static final Set<LockKind> EXCLUSIVE_ONLY = Set.of(EXCLUSIVE);

	private final String description;

	private final String need;

	LockKind(String description, String need) {
		this.description = description;
		this.need = need;
	}

	/** What this kind is called in messages, as a plural ("Read locks"). */
	public String description() {
		return this.description;
	}

	/**
	 * The reason a store that does not offer this kind gives by default, naming the store
	 * and the kind.
	 */
	String missingFrom(String storeName) {
		return this.description + " need " + this.need + ", and the " + storeName + " store does not (it does not"
				+ " offer the lock kind " + name() + ").";
	}

}
