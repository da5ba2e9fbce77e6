package dev.distlock.spi;

import java.util.List;

/**
 * A store that releases the handles of one {@link LockKind#MULTI} acquisition in fewer
 * round trips than one per key. Stores without it have them released one by one.
 */
public interface BatchRelease extends LockProvider {

	/**
	 * Releases the handles of one multi-key acquisition, owner-checked per key. Every
	 * handle is asked, whatever happens to the others.
	 * @return per handle, in order, whether it was still held and is now deleted
	 */
	List<Boolean> releaseAll(List<LockHandle> handles);

	/**
	 * Whether a holder's release of a multi-key lease is sent here as one call, rather
	 * than as one release per key (false: only locks an acquisition gives back are).
	 * Where true, {@link #releaseAll} answers for each handle exactly as the handle's own
	 * {@link LockHandle#release()} would: a {@link TokenBlock} learns whether its release
	 * reached waiters, and a call run again after a lost reply finds the keys the first
	 * run freed released, not lost.
	 */
	default boolean releasesHoldsTogether() {
		return false;
	}

}
