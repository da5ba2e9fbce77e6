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

}
