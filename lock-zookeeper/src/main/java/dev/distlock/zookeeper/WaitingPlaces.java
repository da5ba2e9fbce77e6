package dev.distlock.zookeeper;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * The waiters of one key that subscribed to its releases on one provider, and the places
 * they keep in the key's queue: one place per subscription, shared by the key's waiters.
 *
 * <p>
 * A wait that holds no thread makes each attempt on whichever worker is free, so an
 * attempt cannot be told by its thread, nor does the request name its waiter. So any
 * waiter's attempt takes a free place, the one furthest ahead, and every event on a node
 * that a place watches wakes every waiter of the key: whichever waiter next finds the
 * place at the front of the queue free takes the lock on it, and none is left behind a
 * place that nobody uses. Readers, who go in together, make a node of their own before
 * they use a reader's node still behind a writer, so that every waiting reader stands in
 * the queue. A waiter that stops waiting gives up one place, an empty one if there is
 * one, else the one furthest back.
 */
final class WaitingPlaces {

	final String key;

	private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

	private final List<QueuedNode> places = new CopyOnWriteArrayList<>();

	/**
	 * The holder's node a multi-key waiter watches on the key's behalf, until it fires.
	 */
	volatile @Nullable String watchedHolder;

	/** The watcher of {@link #watchedHolder}, set once per node however often asked. */
	final Watcher holderWatcher = (event) -> {
		this.watchedHolder = null;
		wake();
	};

	WaitingPlaces(String key) {
		this.key = key;
	}

	/** A waiter subscribes: its callback, and one more place. */
	void add(Runnable onRelease) {
		this.listeners.add(onRelease);
		this.places.add(new QueuedNode(this.key, this::wake));
	}

	/** Something in the key's queue changed: every waiter looks again. */
	void wake() {
		this.listeners.forEach(Runnable::run);
	}

	/** Whether a watch is set that will wake the waiters. */
	boolean isWatching() {
		return this.watchedHolder != null || this.places.stream().anyMatch((place) -> place.watched != null);
	}

	/** Whether a place watches nothing: the waiter that used it last was not told. */
	boolean anyUnwatched() {
		return this.places.stream().anyMatch((place) -> place.watched == null);
	}

	boolean isEmpty() {
		return this.listeners.isEmpty() && this.places.isEmpty();
	}

	/**
	 * A free place for an attempt on the given side of the key, locked, or null if every
	 * place is in use or kept on the other side: first the place of that side furthest
	 * ahead in the queue, then an empty one; for a reader, a place whose node still
	 * watches a writer's comes after the empty ones.
	 */
	@Nullable QueuedNode claim(boolean read) {
		List<Ordered> candidates = new ArrayList<>();
		for (QueuedNode place : this.places) {
			if (place.path == null || place.read == read) {
				candidates.add(new Ordered(place, read));
			}
		}
		candidates.sort(Comparator.comparing(Ordered::order));
		for (Ordered candidate : candidates) {
			QueuedNode place = candidate.place();
			if (place.lock.tryLock()) {
				if (this.places.contains(place) && (place.path == null || place.read == read)) {
					return place;
				}
				place.lock.unlock();
			}
		}
		return null;
	}

	/**
	 * A waiter leaves: its callback goes, and one place, the emptiest, is given up to
	 * {@code drop} under its lock (an attempt on it ends first).
	 */
	void remove(Runnable onRelease, Consumer<QueuedNode> drop) {
		this.listeners.remove(onRelease);
		while (true) {
			List<Ordered> candidates = new ArrayList<>();
			this.places.forEach((place) -> candidates.add(new Ordered(place)));
			if (candidates.isEmpty()) {
				return;
			}
			candidates.sort(Comparator.comparing(Ordered::order).reversed());
			QueuedNode place = candidates.stream()
				.map(Ordered::place)
				.filter((candidate) -> candidate.lock.tryLock())
				.findFirst()
				.orElse(null);
			if (place == null) {
				place = candidates.get(0).place();
				place.lock.lock();
			}
			try {
				if (this.places.remove(place)) {
					drop.accept(place);
					return;
				}
			}
			finally {
				place.lock.unlock();
			}
		}
	}

	/** Every place is given up to {@code drop}, under its lock. */
	void clear(Consumer<QueuedNode> drop) {
		for (QueuedNode place : this.places) {
			place.lock.lock();
			try {
				if (this.places.remove(place)) {
					drop.accept(place);
				}
			}
			finally {
				place.lock.unlock();
			}
		}
	}

	/**
	 * A place and its order in the queue, read once (an attempt may be changing it): by
	 * its node's sequence (the name's last ten characters, zero-padded), an empty place
	 * last. Only a hint for the choice, made again under the place's lock.
	 */
	private record Ordered(QueuedNode place, String order) {

		Ordered(QueuedNode place) {
			this(place, orderOf(place.path));
		}

		Ordered(QueuedNode place, boolean read) {
			this(place, (read ? readRank(place) : "") + orderOf(place.path));
		}

		/**
		 * A reader's node still waiting behind a writer's that has not gone tells another
		 * reader nothing new: it makes a node of its own, on an empty place, so that
		 * every waiting reader stands in the queue and all of them go in when that writer
		 * is done.
		 */
		private static String readRank(QueuedNode place) {
			if (place.path == null) {
				return "1";
			}
			return (place.watched == null) ? "0" : "2";
		}

		private static String orderOf(@Nullable String path) {
			return (path != null) ? path.substring(Math.max(0, path.length() - 10)) : "~";
		}

	}

}
