package dev.distlock.inmemory;

import java.util.ArrayList;
import java.util.List;

/**
 * The state of one key of a key space; only ever touched inside a {@code compute} on the
 * key ({@link KeySpace#update}).
 */
abstract class Slot {

	final List<Runnable> subscribers = new ArrayList<>(1);

	/** Something was released or expired during the current operation. */
	boolean freed;

	/** Drops what expired or lapsed by {@code now}, setting {@link #freed}. */
	abstract void prune(long now);

	/** Whether nothing is held, queued or subscribed: the slot may go. */
	abstract boolean unused();

}
