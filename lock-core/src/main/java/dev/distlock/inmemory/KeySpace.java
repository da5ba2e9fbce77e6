package dev.distlock.inmemory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One key space of the in-memory store (locks, or semaphores): one slot per key in use.
 * Every read and write of a slot happens inside a {@code compute} on its key, which makes
 * each operation atomic per key and lets a slot be removed exactly when it becomes
 * unused, without a lock of our own. Its subscribers are told of releases, outside the
 * map's lock.
 *
 * @param <S> the slot of a key
 */
final class KeySpace<S extends Slot> {

	private static final Log logger = LogFactory.getLog(InMemoryLockProvider.class);

	private final ConcurrentHashMap<String, S> slots = new ConcurrentHashMap<>();

	private final Supplier<S> factory;

	private final ReleaseSignals signals = new Signals();

	KeySpace(Supplier<S> factory) {
		this.factory = factory;
	}

	/** Subscriptions to the keys of this space. */
	ReleaseSignals signals() {
		return this.signals;
	}

	/** Keys in use: held, queued for or subscribed to. */
	int size() {
		return this.slots.size();
	}

	/**
	 * Runs {@code action} on the slot of {@code key} atomically, after dropping what
	 * expired or lapsed; removes the slot if it is then unused, and signals the key's
	 * subscribers, outside the map's lock, if something was freed.
	 * @param create whether to create a missing slot; if not, returns null for one
	 */
	<R> @Nullable R update(String key, boolean create, BiFunction<S, Long, R> action) {
		List<Object> outcome = new ArrayList<>(2);
		this.slots.compute(key, (k, current) -> {
			S entry = (current != null) ? current : create ? this.factory.get() : null;
			if (entry == null) {
				return null;
			}
			long now = System.nanoTime();
			entry.prune(now);
			outcome.add(action.apply(entry, now));
			if (entry.freed && !entry.subscribers.isEmpty()) {
				outcome.add(List.copyOf(entry.subscribers));
			}
			entry.freed = false;
			return entry.unused() ? null : entry;
		});
		for (Object subscriber : (outcome.size() > 1) ? (List<?>) outcome.get(1) : List.of()) {
			try {
				((Runnable) subscriber).run();
			}
			catch (RuntimeException ex) {
				// A waiter's callback must not fail a release that happened.
				logger.warn("Release signal subscriber failed", ex);
			}
		}
		@SuppressWarnings("unchecked")
		R result = outcome.isEmpty() ? null : (R) outcome.get(0);
		return result;
	}

	/** Drops every slot that is unused once what expired is dropped. */
	void sweep() {
		for (String key : this.slots.keySet()) {
			update(key, false, (slot, now) -> null);
		}
	}

	/** A lease or queue time in nanoseconds; it must be positive. */
	static long positive(Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("Lease and queue times must be positive but was " + duration);
		}
		return duration.toNanos();
	}

	/** Subscriptions to the slots of this key space. */
	private final class Signals implements ReleaseSignals {

		@Override
		public Subscription subscribe(String key, Runnable onRelease) {
			update(key, true, (slot, now) -> slot.subscribers.add(onRelease));
			AtomicBoolean closed = new AtomicBoolean();
			return () -> {
				if (closed.compareAndSet(false, true)) {
					update(key, false, (slot, now) -> slot.subscribers.remove(onRelease));
				}
			};
		}

		/** Signals are method calls inside this JVM: none is ever lost. */
		@Override
		public boolean isListening() {
			return true;
		}

	}

}
