package dev.distlock;

import java.util.List;

/**
 * Several locks held at once, taken all or none by {@link LockTemplate#acquireAll} (or
 * {@code @DistributedLock(keys = ...)}). Each key is excluded exactly as by a plain lock
 * on it: a plain lock, another multi-key lock sharing a key, and this one never hold a
 * key at the same time.
 *
 * <p>
 * Every key has its own {@linkplain #fencingToken(String) fencing token}, the one a plain
 * lock on that key would have been given at that moment, so a fenced resource per key
 * keeps working whichever way the key was locked. The lease is renewed in the background,
 * all keys together (in as few store calls as the store allows), and is lost as soon as
 * any one of its keys is: {@link #isHeld()} turns false and {@link #release()} releases
 * every key still held, then throws {@link LeaseLostException}. A release never leaves
 * some keys held: every key is asked to be released, whatever happens to the others.
 */
public interface MultiLease extends Lease {

	/** The keys held, deduplicated and in the order they were taken (sorted). */
	List<String> keys();

	/**
	 * The fencing token of {@code key}: strictly greater than every token handed out
	 * earlier for that key, by a plain lock or a multi-key lock, across threads and JVMs.
	 * @throws IllegalArgumentException if {@code key} is not one of {@link #keys()}
	 */
	long fencingToken(String key);

	/** The keys, comma-separated, for messages. */
	@Override
	String key();

	/**
	 * The fencing token of the first of {@link #keys()}; use
	 * {@link #fencingToken(String)} for the others.
	 */
	@Override
	long fencingToken();

}
