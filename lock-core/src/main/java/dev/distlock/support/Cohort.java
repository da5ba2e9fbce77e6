package dev.distlock.support;

import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * Local hand-over ("lock cohorting", Dice, Marathe and Shavit, PPoPP 2012): the store
 * holds the global lock, this JVM is the cohort, and a release passes the lock to the
 * thread waiting at the key's gate in memory, up to a bound, before it goes back to the
 * store. See {@link HandoverSettings} for the rules and {@link LocalHandover} for what
 * the store provides.
 *
 * <p>
 * A lock is handed on only while its lease is held here (state held, deadline not
 * passed), a token of its block is left, the bound is not reached, and the waiter asks
 * for the same lease time and auto-renew setting (the store lease carries over as it is).
 * Anything else releases it in the store, and the waiter asks the store.
 */
final class Cohort {

	private final HandoverSettings settings;

	/** Whether locks are handed over: on, and the store reserves token blocks. */
	private final boolean active;

	private final AtomicLong handovers = new AtomicLong();

	/** Runs owner checks for callers that cannot wait a whole store timeout for them. */
	private final Executor background;

	private final TakeOverGate gate;

	/**
	 * Passed by a thread about to take over a lock left for its line, before it looks at
	 * the run. A template passes {@link #OPEN}; a test that orders a take-over after an
	 * owner check holds the thread here.
	 */
	@FunctionalInterface
	interface TakeOverGate {

		/** Passes at once. */
		TakeOverGate OPEN = (key) -> {
		};

		void pass(String key);

	}

	/**
	 * @param background runs an owner check for a caller that cannot wait a whole store
	 * timeout for it ({@link HandoverRun})
	 * @param gate passed before every take-over
	 */
	Cohort(HandoverSettings settings, LockProvider provider, Executor background, TakeOverGate gate) {
		this.settings = settings;
		this.background = background;
		this.gate = gate;
		this.active = settings.active() && provider instanceof LocalHandover;
	}

	/** Whether a lock of {@code kind} may be handed over in this JVM. */
	boolean applies(LockKind kind) {
		return this.active && kind == LockKind.EXCLUSIVE;
	}

	/**
	 * How many fencing tokens a store acquisition of {@code kind} reserves: a block where
	 * the lock may be handed over, else its own token only.
	 */
	int tokens(LockKind kind) {
		return applies(kind) ? this.settings.blockSize() : 1;
	}

	/**
	 * Leaves {@code lease}, just released by its holder while still held in the store,
	 * for the next thread in the key's local line, if the rules allow and a thread is in
	 * line. Its renewal has stopped: the thread that takes it over ({@link #takeOver})
	 * starts it again, with the same deadline.
	 * @return whether it was left for the line (then nothing is released in the store)
	 */
	boolean handOver(ManagedLease lease, ConcurrentMap<String, LocalQueue> queues) {
		if (!(lease.handle() instanceof TokenBlock block) || !applies(lease.settings().kind())) {
			return false;
		}
		HandoverRun run = lease.run();
		long now = System.nanoTime();
		if ((run != null && run.lost()) || lease.token() >= block.lastToken()
				|| lease.token() - block.fencingToken() >= this.settings.maxPasses()
				|| now - lease.blockSentNanos() >= this.settings.maxTime().toNanos() || lease.nanosToDeadline() <= 0) {
			return false;
		}
		boolean[] offered = new boolean[1];
		// In the map's lock for the key: a line that empties meanwhile finds the offer.
		LocalQueue queue = queues.computeIfPresent(lease.key(), (key, line) -> {
			if (line.users > 0) {
				// The run of hand-overs starts with the first offer, which publishes it.
				lease.runForHandOver(block, this.background);
				offered[0] = line.offer(lease);
			}
			return line;
		});
		if (offered[0] && queue != null) {
			queue.signal();
		}
		return offered[0];
	}

	/**
	 * The caller at the gate takes over a lock left for the line: the same store
	 * acquisition with the next token of its block, its deadline, and renewal from now
	 * on. Null when it may not (its lease time or auto-renew setting differ, the lease
	 * ran out meanwhile, or the store no longer holds the lock): the caller then discards
	 * the lock ({@link WaitLoop#discard}).
	 * @throws dev.distlock.LockBackendException if the owner check this thread waited for
	 * failed; the caller discards the lock too
	 *
	 * <p>
	 * A thread that asked for the lock ({@code askedNanos}) after the last store call
	 * that found the lock held was sent first waits for an owner check sent after it
	 * asked ({@link HandoverRun}): otherwise a holder of another JVM that took a lock the
	 * store lost could have a greater token than this later request. The caller waits for
	 * that check one store timeout at most, or, once its wait time has run out
	 * ({@code waitDeadlineNanos}), what is left of the store timeout after it: an acquire
	 * ends within its wait time and one store timeout.
	 */
	@Nullable ManagedLease takeOver(ManagedLease left, LockSettings lock, ConcurrentMap<String, ManagedLease> held,
			long askedNanos, long waitDeadlineNanos, @Nullable Thread acquirer) {
		this.gate.pass(left.key());
		HandoverRun run = left.run();
		if (run == null || run.lost() || !applies(lock.kind()) || !compatible(left.settings(), lock)
				|| left.nanosToDeadline() <= 0) {
			return null;
		}
		// A store that fails the owner check fails this caller's acquire (the caller
		// discards the lock): its wait, spent behind a hand-over it could not confirm,
		// ends as the store's failure, never as a busy lock.
		if (!run.askedBeforeConfirmation(askedNanos)
				&& (!heldSince(run, left, askedNanos, waitDeadlineNanos) || left.nanosToDeadline() <= 0)) {
			return null;
		}
		ManagedLease next = left.successor(lock, acquirer, System.nanoTime());
		if (!held.replace(left.key(), left, next)) {
			return null;
		}
		run.holder(next);
		next.start();
		if (run.lost()) {
			// A check found the lock lost before this holder was known to the run.
			next.lostInStore("an owner check after a local hand-over found the key expired or held by another owner");
		}
		this.handovers.incrementAndGet();
		return next;
	}

	/**
	 * The owner check a take-over waits for: for one store timeout from now, or, once the
	 * caller's wait time has run out, for what is left of the store timeout after it.
	 */
	private static boolean heldSince(HandoverRun run, ManagedLease left, long askedNanos, long waitDeadlineNanos) {
		if (System.nanoTime() - waitDeadlineNanos <= 0) {
			return run.heldSince(askedNanos);
		}
		return run.heldSince(askedNanos, waitDeadlineNanos + left.provider().callTimeout().toNanos());
	}

	/**
	 * The lock went back to the store for a waiter of another JVM: this JVM's waiters
	 * stand back for a quarter of the maximum time (at most the retry interval): long
	 * enough for a signalled waiter to take it, short enough that a JVM whose run ended
	 * early does not get the next turn as well, so that waiter takes it first. Not when a
	 * waiter of this JVM may have made the mark itself ({@link LocalQueue#selfMarked}).
	 */
	void releasedToOthers(ManagedLease lease, @Nullable LocalQueue queue) {
		if (queue != null && this.active && !queue.selfMarked) {
			queue.standBackUntil = System.nanoTime()
					+ Math.min(this.settings.maxTime().toNanos() / 4, lease.settings().retryInterval().toNanos());
		}
	}

	/** Locks handed over in memory so far. */
	long handovers() {
		return this.handovers.get();
	}

	/** The store lease carries over as it is, so the next holder must want the same. */
	private static boolean compatible(LockSettings holder, LockSettings next) {
		return !next.fair() && holder.leaseTime().equals(next.leaseTime()) && holder.autoRenew() == next.autoRenew();
	}

}
