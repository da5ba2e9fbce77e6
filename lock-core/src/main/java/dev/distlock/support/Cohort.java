package dev.distlock.support;

import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
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

	private final @Nullable LocalHandover store;

	private final AtomicLong handovers = new AtomicLong();

	Cohort(HandoverSettings settings, LockProvider provider) {
		this.settings = settings;
		this.store = (settings.active() && provider instanceof LocalHandover handover) ? handover : null;
	}

	/** Whether a lock taken with {@code lock} may be handed over in this JVM. */
	boolean applies(LockSettings lock) {
		return this.store != null && !lock.fair();
	}

	/**
	 * One store attempt that reserves a token block; only where {@link #applies} holds.
	 */
	LockAttempt attempt(String key, LockSettings lock, boolean waiting) {
		LocalHandover handover = this.store;
		if (handover == null) {
			throw new IllegalStateException("Local hand-over is off");
		}
		return handover.tryLockBlock(key, lock.leaseTime(), waiting, this.settings.blockSize());
	}

	/**
	 * Passes {@code lease}, just released by its holder while still held in the store, to
	 * the thread at the gate of {@code queue}, if the rules allow.
	 * @return whether it was handed over
	 */
	boolean handOver(ManagedLease lease, @Nullable LocalQueue queue, ConcurrentMap<String, ManagedLease> held) {
		if (queue == null || !(lease.handle() instanceof TokenBlock block) || !applies(lease.settings())) {
			return false;
		}
		long now = System.nanoTime();
		if (lease.token() >= block.lastToken() || lease.token() - block.fencingToken() >= this.settings.maxPasses()
				|| now - lease.blockSentNanos() >= this.settings.maxTime().toNanos() || lease.nanosToDeadline() <= 0) {
			return false;
		}
		boolean handed = queue.offer((acceptor) -> {
			if (!compatible(lease.settings(), acceptor.settings())) {
				return null;
			}
			ManagedLease next = lease.successor(acceptor.settings(), acceptor.thread(), now);
			if (!held.replace(lease.key(), lease, next)) {
				return null;
			}
			next.start();
			return next;
		});
		if (handed) {
			this.handovers.incrementAndGet();
		}
		return handed;
	}

	/**
	 * The lock went back to the store for a waiter of another JVM: this JVM's waiters
	 * stand back for up to the maximum time (and at most the retry interval), so that
	 * waiter takes it first. Not when a waiter of this JVM may have made the mark itself
	 * ({@link LocalQueue#selfMarked}).
	 */
	void releasedToOthers(ManagedLease lease, @Nullable LocalQueue queue) {
		if (queue != null && this.store != null && !queue.selfMarked) {
			queue.standBackUntil = System.nanoTime()
					+ Math.min(this.settings.maxTime().toNanos(), lease.settings().retryInterval().toNanos());
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
