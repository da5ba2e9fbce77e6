package dev.distlock.spi;

import java.time.Duration;

import dev.distlock.DistributedLatch;
import org.jspecify.annotations.Nullable;

/**
 * The countdown latches of a store ({@link LockProvider#latches()}): a latch has a
 * generation (a number that only rises, also across expiry), a count, and the set of
 * participants counted in the current generation, so that counting is idempotent per
 * participant. Every write starts the latch's expiry again; a latch untouched for its
 * expiry is gone. Latches live in their own key space: a latch and a lock of the same
 * name are unrelated.
 */
public interface LatchStore {

	/**
	 * The current generation of {@code key}, arming one with {@code count} if there is
	 * none.
	 */
	LatchState join(String key, int count, Duration expiry);

	/**
	 * Counts {@code participant} in {@code generation}, if that is the current
	 * generation; signals waiters when the latch opens.
	 */
	DistributedLatch.CountDown countDown(String key, long generation, String participant, Duration expiry);

	/** The latch's state, or null if there is none (never armed, or expired). */
	@Nullable LatchState state(String key);

	/**
	 * Arms a new generation with {@code count}, provided {@code generation} is the
	 * current one (or there is none); remembers whether the old one opened.
	 * @return the current state afterwards: the new generation, or the one another caller
	 * armed first
	 */
	LatchState rearm(String key, long generation, int count, Duration expiry);

	/**
	 * Signals, per latch key, that the latch may have opened or been re-armed; waiters
	 * still re-check at their retry interval.
	 */
	ReleaseSignals signals();

	/**
	 * One latch as the store holds it.
	 *
	 * @param generation the current generation
	 * @param count participants needed to open it
	 * @param remaining participants still missing; 0 once open
	 * @param previousGeneration the generation before this one, 0 if none
	 * @param previousOpened whether the previous generation opened before it was re-armed
	 */
	record LatchState(long generation, int count, int remaining, long previousGeneration, boolean previousOpened) {
	}

}
