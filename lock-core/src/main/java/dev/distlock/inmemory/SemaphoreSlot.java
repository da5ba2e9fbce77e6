package dev.distlock.inmemory;

import java.util.HashMap;
import java.util.Map;

/** A semaphore: its count and its held permits, each with its deadline. */
final class SemaphoreSlot extends Slot {

	int permits;

	final Map<Permit, Long> holders = new HashMap<>(4);

	@Override
	void prune(long now) {
		if (this.holders.values().removeIf((deadline) -> now - deadline >= 0)) {
			this.freed = true;
		}
	}

	@Override
	boolean unused() {
		return this.holders.isEmpty() && this.subscribers.isEmpty();
	}

}
