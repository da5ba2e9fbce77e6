package dev.distlock.spi;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A store that takes several locks in one attempt, all or none. Each key is written
 * exactly as {@link LockProvider#tryLock} writes it (so plain locks on it are excluded)
 * and gets the fencing token a plain lock would get. Waiting, renewal and loss detection
 * stay with the machinery, per key, through the returned handles.
 */
public interface MultiLocking extends LockProvider {

	/**
	 * Tries once to take every one of {@code keys}. Never waits, and never leaves some of
	 * them held: if one is busy, or the call fails or is interrupted after some keys were
	 * written, those keys are released (owner-checked) before this returns or throws.
	 * @param keys distinct keys, sorted
	 * @param waiting whether the caller will wait, so that the busy key's release must be
	 * signalled
	 * @return {@link MultiAttempt.Acquired} with one handle per key, in the order of
	 * {@code keys}, or {@link MultiAttempt.Busy} naming a key held by another owner
	 */
	MultiAttempt tryLockAll(List<String> keys, Duration leaseTime, boolean waiting);

	/**
	 * Releases the handles of one {@link #tryLockAll}, owner-checked per key, in as few
	 * round trips as the store allows. Every handle is asked, whatever happens to the
	 * others.
	 * @return per handle, in order, whether it was still held and is now deleted
	 */
	default List<Boolean> releaseAll(List<LockHandle> handles) {
		return handles.stream().map(LockHandle::release).toList();
	}

	/**
	 * Why this store, as configured, cannot take multi-key locks after all, as a sentence
	 * naming the setting, or null if it can.
	 */
	default @Nullable String multiKeyLocksUnavailable() {
		return null;
	}

	/** The outcome of one {@link #tryLockAll}. */
	sealed interface MultiAttempt {

		/** Every key was taken; one handle per key, in key order. */
		record Acquired(List<LockHandle> handles) implements MultiAttempt {

			public Acquired {
				handles = List.copyOf(handles);
			}

		}

		/**
		 * {@code key} is held by another owner, for about {@code remaining} (zero when
		 * unknown); nothing is held.
		 */
		record Busy(String key, Duration remaining) implements MultiAttempt {
		}

	}

}
