package dev.distlock;

/**
 * A held distributed lock. Obtained from {@link LockTemplate#acquire} or
 * {@link LockTemplate#tryAcquire}, and released with {@link #release()} or
 * try-with-resources.
 *
 * <p>
 * A lease is time-bounded: if its holder crashes, the lock frees itself after the lease
 * time. With auto-renew (the default) the lease is extended in the background while held;
 * if that fails (the key expired or was taken over, or the store stayed unreachable until
 * the lease ran out) the lease is <em>lost</em>: {@link #isHeld()} turns false and
 * {@link #release()} throws {@link LeaseLostException}.
 */
public interface Lease extends AutoCloseable {

	/** The key as the user gave it. */
	String key();

	/**
	 * A number strictly greater than every token handed out earlier for the same key,
	 * across threads and JVMs. A re-entrant acquisition shares the outer one's token.
	 * Pass it to the store you write to and have it reject writes carrying a token lower
	 * than one it has seen: that turns a lost lease into a rejected write instead of a
	 * corrupted one.
	 */
	long fencingToken();

	/**
	 * Whether the lease is still held: false once released, or once it is known to be
	 * lost.
	 */
	boolean isHeld();

	/**
	 * Releases the lock (for a nested lease: gives back one level of reentrancy).
	 * Idempotent: later calls do nothing.
	 * @throws LeaseLostException if the lease had been lost while held
	 * @throws LockBackendException if the store could not be reached; the lock then
	 * expires after its lease
	 */
	void release();

	/** Same as {@link #release()}. */
	@Override
	default void close() {
		release();
	}

}
