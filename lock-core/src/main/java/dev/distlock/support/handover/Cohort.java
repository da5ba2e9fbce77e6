package dev.distlock.support.handover;

import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.HandoverSettings;
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
 *
 * @param <L> the template's lease type
 */
final class Cohort<L extends HandedLease<L>> implements Handover<L> {

	private final int maxPasses;

	private final long maxTimeNanos;

	/** The store's bound on one call. */
	private final long callTimeoutNanos;

	private final AtomicLong handovers = new AtomicLong();

	/** Runs owner checks for callers that cannot wait a whole store timeout for them. */
	private final Executor background;

	private final TakeOverGate gate;

	/**
	 * @param settings on, with at least one pass
	 * @param callTimeoutNanos the store's bound on one call
	 * @param background runs an owner check for a caller that cannot wait a whole store
	 * timeout for it ({@link HandoverRun})
	 * @param gate passed before every take-over
	 */
	Cohort(HandoverSettings settings, long callTimeoutNanos, Executor background, TakeOverGate gate) {
		this.maxPasses = settings.maxPasses();
		this.maxTimeNanos = settings.maxTime().toNanos();
		this.callTimeoutNanos = callTimeoutNanos;
		this.background = background;
		this.gate = gate;
	}

	@Override
	public boolean applies(LockKind kind) {
		return kind == LockKind.EXCLUSIVE;
	}

	@Override
	public int tokens(LockKind kind) {
		return applies(kind) ? this.maxPasses + 1 : 1;
	}

	@Override
	public <Q extends HandoverLine.Line<L>> boolean handOver(L lease, ConcurrentMap<String, Q> lines) {
		if (!(lease.handle() instanceof TokenBlock block) || !applies(lease.terms().kind())) {
			return false;
		}
		HandoverRun run = lease.run();
		long now = System.nanoTime();
		if ((run != null && run.lost()) || lease.token() >= block.lastToken()
				|| lease.token() - block.fencingToken() >= this.maxPasses
				|| now - lease.blockSentNanos() >= this.maxTimeNanos || lease.nanosToDeadline() <= 0) {
			return false;
		}
		boolean[] offered = new boolean[1];
		// In the map's lock for the key: a line that empties meanwhile finds the offer.
		Q queue = lines.computeIfPresent(lease.key(), (key, line) -> {
			if (line.inUse()) {
				// The run of hand-overs starts with the first offer, which publishes it.
				if (lease.run() == null) {
					lease.joinRun(
							new HandoverRun(block, lease.blockSentNanos(), this.callTimeoutNanos, this.background));
				}
				offered[0] = line.handover().offer(lease);
			}
			return line;
		});
		if (offered[0] && queue != null) {
			queue.signal();
		}
		return offered[0];
	}

	/**
	 * {@inheritDoc}
	 *
	 * <p>
	 * It may not when its lease time or auto-renew setting differ, the lease ran out
	 * meanwhile, or the store no longer holds the lock. A thread that asked for the lock
	 * ({@code askedNanos}) after the last store call that found the lock held was sent
	 * first waits for an owner check sent after it asked ({@link HandoverRun}): otherwise
	 * a holder of another JVM that took a lock the store lost could have a greater token
	 * than this later request. The caller waits for that check one store timeout at most,
	 * or, once its wait time has run out ({@code waitDeadlineNanos}), what is left of the
	 * store timeout after it: an acquire ends within its wait time and one store timeout.
	 */
	@Override
	public @Nullable L takeOver(L left, HandoverTerms wanted, long askedNanos, long waitDeadlineNanos,
			UnaryOperator<L> successor) {
		this.gate.pass(left.key());
		HandoverRun run = left.run();
		if (run == null || run.lost() || !applies(wanted.kind()) || !compatible(left.terms(), wanted)
				|| left.nanosToDeadline() <= 0) {
			return null;
		}
		// A store that fails the owner check fails this caller's acquire (the caller
		// discards the lock): its wait, spent behind a hand-over it could not confirm,
		// ends as the store's failure, never as a busy lock.
		if (!run.askedBeforeConfirmation(askedNanos)
				&& (!heldSince(run, askedNanos, waitDeadlineNanos) || left.nanosToDeadline() <= 0)) {
			return null;
		}
		L next = successor.apply(left);
		if (next == null) {
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
	private boolean heldSince(HandoverRun run, long askedNanos, long waitDeadlineNanos) {
		if (System.nanoTime() - waitDeadlineNanos <= 0) {
			return run.heldSince(askedNanos);
		}
		return run.heldSince(askedNanos, waitDeadlineNanos + this.callTimeoutNanos);
	}

	/**
	 * The lock went back to the store for a waiter of another JVM: this JVM's waiters
	 * stand back for a quarter of the maximum time (at most the retry interval): long
	 * enough for a signalled waiter to take it, short enough that a JVM whose run ended
	 * early does not get the next turn as well, so that waiter takes it first. Not when a
	 * waiter of this JVM may have made the mark itself ({@link HandoverLine#selfMarked}).
	 */
	@Override
	public void releasedToOthers(L lease, HandoverLine.@Nullable Line<L> line) {
		if (line != null && !line.handover().selfMarked) {
			line.handover().standBackUntil = System.nanoTime()
					+ Math.min(this.maxTimeNanos / 4, lease.terms().retryInterval().toNanos());
		}
	}

	@Override
	public long standBackNanos(LockKind kind, HandoverLine<L> line) {
		return applies(kind) ? line.standBackUntil - System.nanoTime() : 0;
	}

	@Override
	public void markedHere(LockKind kind, HandoverLine<L> line, boolean marked) {
		if (!marked) {
			line.selfMarked = false;
		}
		else if (applies(kind)) {
			line.selfMarked = true;
		}
	}

	@Override
	public long handovers() {
		return this.handovers.get();
	}

	/** The store lease carries over as it is, so the next holder must want the same. */
	private static boolean compatible(HandoverTerms holder, HandoverTerms next) {
		return !next.fair() && holder.leaseTime().equals(next.leaseTime()) && holder.autoRenew() == next.autoRenew();
	}

}
