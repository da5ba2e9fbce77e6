package dev.distlock;

import java.time.Duration;

/**
 * A countdown latch shared across JVMs: it opens once {@link #count()} distinct
 * participants have counted down. Obtained from {@link LockTemplate#latch}.
 *
 * <p>
 * Guarantees:
 * <ul>
 * <li>{@link #countDown(String)} counts each participant once per generation: a retried
 * call (a reply lost on the network, a message redelivered) cannot count twice, so the
 * latch never opens early.</li>
 * <li>A latch nobody touches for its expiry is deleted by the store: an abandoned latch
 * does not stay forever. Every count-down and re-arm starts the expiry again.</li>
 * <li>{@link #await(Duration)} is woken by the store's signal when the latch opens, and
 * checks the store again at least every retry interval, so a lost signal delays it by at
 * most that much.</li>
 * <li>Each arming of the latch is a <em>generation</em>. A handle belongs to the
 * generation it joined: once the latch is re-armed ({@link #rearm(int)}), late calls on
 * old handles touch nothing ({@link CountDown#STALE}), and waiters of the old generation
 * are told how it ended.</li>
 * </ul>
 */
public interface DistributedLatch {

	/** The latch's name, as given to {@link LockTemplate#latch}. */
	String key();

	/** The generation this handle belongs to; a later arming has a greater number. */
	long generation();

	/** How many distinct participants open this generation. */
	int count();

	/**
	 * Counts {@code participant} down, once: a second call with the same participant in
	 * the same generation changes nothing.
	 * @return what the call did
	 */
	CountDown countDown(String participant);

	/**
	 * Waits until this handle's generation opens, or the timeout passes.
	 * @return true if the generation opened, false if the timeout passed first
	 * @throws InterruptedException if the thread was interrupted while waiting
	 * @throws IllegalStateException if the generation ended without opening: it was
	 * re-armed, or it expired, before enough participants counted down
	 */
	boolean await(Duration timeout) throws InterruptedException;

	/**
	 * Participants still missing in this handle's generation: 0 once it opened.
	 * @throws IllegalStateException if the generation ended without opening
	 */
	int getCount();

	/**
	 * Starts a new generation of this latch with {@code count} participants, closed,
	 * provided this handle's generation is still the current one. Late calls of this
	 * generation then touch nothing.
	 * @return a handle on the new generation; if another caller re-armed the latch first,
	 * a handle on that generation
	 * @throws IllegalStateException if the generation another caller armed has a
	 * different count
	 */
	DistributedLatch rearm(int count);

	/** What one {@link #countDown(String)} did. */
	enum CountDown {

		/** The participant was counted. */
		COUNTED,

		/**
		 * The participant had already been counted in this generation: nothing changed.
		 */
		ALREADY_COUNTED,

		/**
		 * The generation had already opened without this participant: nothing changed.
		 */
		ALREADY_OPEN,

		/**
		 * This handle's generation is over (re-armed or expired): nothing changed.
		 */
		STALE

	}

}
