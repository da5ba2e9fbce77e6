package dev.distlock.support;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * Callers waiting for a key held in this JVM that do not stand in its local line (a
 * multi-key acquire waits for several keys at once): told when a lease of this JVM on the
 * key is released or lost.
 */
final class KeyWaiters {

	private final ConcurrentMap<String, Set<Runnable>> waiters = new ConcurrentHashMap<>();

	/** Calls {@code wakeup} whenever one of {@code keys} is freed here, until closed. */
	List<Registration> register(Collection<String> keys, Runnable wakeup) {
		List<Registration> registrations = new ArrayList<>(keys.size());
		for (String key : keys) {
			this.waiters.computeIfAbsent(key, (k) -> new CopyOnWriteArraySet<>()).add(wakeup);
			registrations.add(() -> this.waiters.computeIfPresent(key, (k, set) -> {
				set.remove(wakeup);
				return set.isEmpty() ? null : set;
			}));
		}
		return registrations;
	}

	/** A lease on {@code key} held here was released or lost. */
	void freed(String key) {
		Set<Runnable> set = this.waiters.get(key);
		if (set != null) {
			set.forEach(Runnable::run);
		}
	}

	/** One registration, to close when the wait ends. */
	@FunctionalInterface
	interface Registration {

		void close();

	}

}
