package dev.distlock;

/**
 * Which side of a key's read-write lock an acquisition takes.
 *
 * <p>
 * A plain lock is the writer's side of its key: {@link #WRITE} is the default, so a plain
 * lock and a write lock on the same key are one and the same lock, and both exclude the
 * key's readers. Readers share the key with each other. A writer waiting for the key
 * stops new readers from coming in, so a steady stream of readers cannot starve it.
 *
 * <p>
 * Re-entry inside a held scope on the same thread:
 * <ul>
 * <li>a writer (or plain lock holder) asking for {@link #READ} on its key re-enters its
 * write lock: the write lock already excludes everyone else, so reading under it is safe
 * (a downgrade; the key stays write-locked until the outermost scope ends);</li>
 * <li>a reader asking for {@link #READ} again re-enters its read hold, without a store
 * call, so a writer waiting in between cannot deadlock it;</li>
 * <li>a reader asking for {@link #WRITE} (an upgrade) fails at once with
 * {@link IllegalStateException}: two readers upgrading at once would wait for each other
 * forever. Release the read lock first.</li>
 * </ul>
 *
 * <p>
 * Only the writer's fencing token fences writes: readers get tokens too (every
 * acquisition does), but several readers hold the key at once.
 */
public enum LockMode {

	/** Exclusive: the plain lock's mode, the default. */
	WRITE,

	/** Shared with other readers; excluded by a writer and by a waiting writer. */
	READ

}
