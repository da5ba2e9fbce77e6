package dev.distlock.support.handover;

import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;

/**
 * What local hand-over keeps on one local line of the template: the lock left for the
 * line, and whether this JVM's waiters stand back for another JVM's.
 *
 * @param <L> the template's lease type
 */
public final class HandoverLine<L> {

	/**
	 * A lock released by its holder while callers were in the line, still held in the
	 * store, for the next of them to take over in memory ({@link Cohort}); set while the
	 * lines' map lock for the key is held, so never after the line emptied.
	 */
	private final AtomicReference<@Nullable L> offered = new AtomicReference<>();

	/**
	 * Until when (monotonic clock) this JVM's waiters stand back, after the lock went
	 * back to the store for a waiter of another JVM.
	 */
	volatile long standBackUntil = System.nanoTime();

	/**
	 * A waiter of this JVM found the key busy, marking it as waited for, while a caller
	 * of this JVM held it: the store's mark then says nothing of other JVMs' waiters.
	 */
	volatile boolean selfMarked;

	/**
	 * Leaves {@code lease} for the next caller of the line, if none is left there yet.
	 * Called inside the lines' map lock for the key, with callers in the line.
	 */
	boolean offer(L lease) {
		return this.offered.compareAndSet(null, lease);
	}

	/** Whether a lock is left for the line. */
	public boolean hasOffer() {
		return this.offered.get() != null;
	}

	/** The lock left for the line, if any; taken once, by one caller. */
	public @Nullable L takeOffer() {
		return this.offered.getAndSet(null);
	}

	/**
	 * A line of the template: its callers and its hand-over state.
	 *
	 * @param <L> the template's lease type
	 */
	public interface Line<L> {

		/** Whether callers use the line; asked inside the lines' map lock for the key. */
		boolean inUse();

		HandoverLine<L> handover();

		/** The lock may be free: the caller at the gate looks again. */
		void signal();

	}

}
