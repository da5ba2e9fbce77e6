package dev.distlock.support;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.LockBackendException;
import dev.distlock.support.handover.HandoverLine;
import org.jspecify.annotations.Nullable;

/**
 * The local line for one key: callers of this JVM that want the same key line up at the
 * gate, in arrival order, so that only one of them at a time talks to the store and waits
 * for a release signal. The gate is left as soon as the lock is taken (or given up),
 * never held with the lock, so a lock that expires in the store never blocks this JVM.
 * Callers in line are {@link Turn}s, not threads: the caller leaving the gate lets the
 * next one through.
 *
 * <p>
 * The line counts the failures of the store calls made at its gate, so that callers
 * behind a call that failed share its failure ({@link LineTurn}).
 *
 * <p>
 * A line of readers lets every caller through at once: readers hold together, so one
 * waiting behind another would only come later. Each goes to the store and waits for its
 * own signal, and stands in the store's queue where the store keeps one, so that all of
 * them go in when the writer before them is done, not one per writer. Only the reader
 * that has waited longest makes the fallback poll, so that readers waiting together cost
 * the store one poll per interval, not one each; when it ends (in, most often) the others
 * look again at once.
 */
final class LocalQueue implements HandoverLine.Line<ManagedLease> {

	/** Callers using this line; guarded by the lines' map compute. */
	int users;

	/** Whether every caller goes through the gate at once (readers). */
	private final boolean together;

	/** The waits of the callers at the gate, told of signals, oldest first. */
	private final Deque<LockWait> waits = new ConcurrentLinkedDeque<>();

	/** Guards the gate and the line only, never a store call. */
	private final ReentrantLock lock = new ReentrantLock();

	/** Guarded by {@link #lock}: a caller is through the gate. */
	private boolean occupied;

	/** Guarded by {@link #lock}: callers waiting for the gate, in arrival order. */
	private final ArrayDeque<Turn> line = new ArrayDeque<>();

	/**
	 * Told when the store call on the wire ends; null while no call is on the wire. Not
	 * guarded by {@link #lock}, so that the caller at the gate, which may be an event
	 * loop, never waits for it around its store call.
	 */
	private final AtomicReference<@Nullable List<Runnable>> calling = new AtomicReference<>();

	private final AtomicReference<Failures> failures = new AtomicReference<>(Failures.NONE);

	/**
	 * The lock left for this line by local hand-over, and whether its waiters stand back.
	 */
	private final HandoverLine<ManagedLease> handover = new HandoverLine<>();

	/**
	 * @param together whether every caller goes through the gate at once, not in turn
	 */
	LocalQueue(boolean together) {
		this.together = together;
	}

	@Override
	public HandoverLine<ManagedLease> handover() {
		return this.handover;
	}

	@Override
	public boolean inUse() {
		return this.users > 0;
	}

	/** A release (or loss) may have freed the key: the waiters at the gate retry. */
	@Override
	public void signal() {
		for (LockWait wait : this.waits) {
			wait.signal();
		}
	}

	/** {@code wait} is at the gate, to be told of signals until it ends. */
	void waiting(LockWait wait) {
		this.waits.add(wait);
	}

	/**
	 * {@code wait} ended: it is told of signals no more. The reader that polled for a
	 * line of readers hands the poll on, and the others look again: it most often ended
	 * because the key let it in, and a reader that got in may not have been signalled to
	 * the rest.
	 */
	void ended(LockWait wait) {
		boolean polled = this.together && this.waits.peekFirst() == wait;
		this.waits.remove(wait);
		if (polled) {
			signal();
		}
	}

	/**
	 * Whether {@code wait} makes the fallback poll (or, without signals, the polls) for
	 * its line: the one caller at the gate, or the reader that has waited longest.
	 */
	boolean polls(LockWait wait) {
		return !this.together || this.waits.peekFirst() == wait;
	}

	/**
	 * Enters the gate if nobody is through it; else puts {@code turn} in line (when
	 * {@code queue}), to be {@link Turn#letThrough let through} in its turn.
	 * @return whether the gate was entered
	 */
	boolean enter(Turn turn, boolean queue) {
		if (this.together) {
			return true;
		}
		this.lock.lock();
		try {
			if (!this.occupied) {
				this.occupied = true;
				return true;
			}
			if (queue) {
				this.line.add(turn);
			}
			return false;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Enters the gate if nobody is through it and its lock is free at once: for a caller
	 * that must not wait even for the line's lock (an event loop), which starts over
	 * where it may wait when this answers false.
	 */
	boolean enterAtOnce() {
		if (this.together) {
			return true;
		}
		if (!this.lock.tryLock()) {
			return false;
		}
		try {
			if (this.occupied) {
				return false;
			}
			this.occupied = true;
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Leaves the gate, letting the next caller in line through. */
	void exit() {
		if (this.together) {
			return;
		}
		Turn next;
		this.lock.lock();
		try {
			do {
				next = this.line.poll();
			}
			while (next != null && !next.claim());
			if (next == null) {
				this.occupied = false;
			}
		}
		finally {
			this.lock.unlock();
		}
		if (next != null) {
			next.letThrough();
		}
	}

	/** Failures so far: a caller notes this when it joins the line. */
	long failures() {
		return this.failures.get().count();
	}

	void callStarted() {
		this.calling.set(List.of());
	}

	/** The store call ended; {@code failure} is its error, if the store failed. */
	void callEnded(@Nullable LockBackendException failure) {
		// Counted before the call is seen to end, so that whoever is told of its end
		// sees its failure. Callers that go through together are behind nobody's call.
		if (failure != null && !this.together) {
			this.failures.updateAndGet((current) -> new Failures(current.count() + 1, failure));
		}
		List<Runnable> listeners = this.calling.getAndSet(null);
		if (listeners != null) {
			listeners.forEach(Runnable::run);
		}
	}

	/**
	 * Calls {@code listener} when the store call on the wire for this line ends.
	 * @return false, calling nothing, when no call is on the wire
	 */
	boolean onCallEnd(Runnable listener) {
		while (true) {
			List<Runnable> current = this.calling.get();
			if (current == null) {
				return false;
			}
			List<Runnable> next = new ArrayList<>(current.size() + 1);
			next.addAll(current);
			next.add(listener);
			if (this.calling.compareAndSet(current, next)) {
				return true;
			}
		}
	}

	/**
	 * The latest failure of a store call of this line, if any since
	 * {@code joinedFailures}.
	 */
	@Nullable LockBackendException failureSince(long joinedFailures) {
		Failures current = this.failures.get();
		return (current.count() != joinedFailures) ? current.last() : null;
	}

	private record Failures(long count, @Nullable LockBackendException last) {

		static final Failures NONE = new Failures(0, null);

	}

	/**
	 * A caller waiting in line: let through the gate, or given up (its deadline, an
	 * interrupt, a cancel), whichever claims it first.
	 */
	abstract static class Turn {

		private final AtomicBoolean claimed = new AtomicBoolean();

		/** Whether this call decides the turn's fate. */
		final boolean claim() {
			return this.claimed.compareAndSet(false, true);
		}

		/** It is this caller's turn at the gate; must return at once. */
		abstract void letThrough();

	}

}
