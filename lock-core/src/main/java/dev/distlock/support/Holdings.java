package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiConsumer;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.LockKind;
import dev.distlock.support.handover.Handover;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The leases that a template's callers hold, and what the template hears of them
 * ({@link LeaseEvents}): a release or loss wakes the key's local lines and the multi-key
 * waiters, a release may leave the lock for the line ({@link Handover}), and a release
 * that failed as the store could not be reached is tried again.
 */
final class Holdings implements LeaseEvents {

	/** Under the template's name, where operators look for its shutdown. */
	private static final Log logger = LogFactory.getLog(DefaultLockTemplate.class);

	/**
	 * The lease this JVM holds per key, so local waiters wait for it without asking the
	 * store; at most one per key by mutual exclusion.
	 */
	final ConcurrentMap<String, ManagedLease> held = new ConcurrentHashMap<>();

	/**
	 * Read holds and semaphore permits held by the template's callers: several per key,
	 * so never in {@link #held}.
	 */
	private final Set<ManagedLease> shared = ConcurrentHashMap.newKeySet();

	private final LocalLines lines;

	private final KeyWaiters keyWaiters;

	private final Handover<ManagedLease> handover;

	private final BiConsumer<ManagedLease, LockBackendException> releaseFailed;

	/**
	 * @param releaseFailed told of a release that failed as the store could not be
	 * reached, to try it again
	 */
	Holdings(LocalLines lines, KeyWaiters keyWaiters, Handover<ManagedLease> handover,
			BiConsumer<ManagedLease, LockBackendException> releaseFailed) {
		this.lines = lines;
		this.keyWaiters = keyWaiters;
		this.handover = handover;
		this.releaseFailed = releaseFailed;
	}

	/** Records a lease just taken. */
	void add(ManagedLease lease) {
		LockKind kind = lease.settings().kind();
		if (kind == LockKind.SHARED || kind == LockKind.PERMITS) {
			this.shared.add(lease);
		}
		else {
			this.held.put(lease.key(), lease);
		}
	}

	@Override
	public void ended(ManagedLease lease) {
		if (this.held.remove(lease.key(), lease)) {
			// A multi-key wait that found this lease released but its release still on
			// the wire waits for the lease to leave the map, which can be after the
			// release woke it.
			this.keyWaiters.freed(lease.key());
		}
		this.shared.remove(lease);
	}

	/** Every line of the key, and multi-key waiters for it. */
	@Override
	public void freed(String key) {
		this.lines.freed(key);
		this.keyWaiters.freed(key);
	}

	@Override
	public boolean handOver(ManagedLease lease) {
		return this.handover.handOver(lease, this.lines.queues);
	}

	@Override
	public void releasedToOthers(ManagedLease lease) {
		this.handover.releasedToOthers(lease, this.lines.writeLine(lease.key()));
	}

	@Override
	public void releaseFailed(ManagedLease lease, LockBackendException failure) {
		this.releaseFailed.accept(lease, failure);
	}

	/** Locks held now. */
	int count() {
		return this.held.size() + this.shared.size();
	}

	private List<ManagedLease> all() {
		List<ManagedLease> leases = new ArrayList<>(this.held.values());
		leases.addAll(this.shared);
		return leases;
	}

	/** What is held now, one entry per lock still held. A snapshot. */
	List<DefaultLockTemplate.HeldLock> details() {
		long now = System.nanoTime();
		List<DefaultLockTemplate.HeldLock> details = new ArrayList<>(count());
		for (ManagedLease lease : all()) {
			if (lease.heldNow()) {
				details.add(new DefaultLockTemplate.HeldLock(lease.key(), lease.name(), lease.token(),
						lease.holderNames(), Duration.ofNanos(Math.max(0, now - lease.acquiredAtNanos())),
						Duration.ofNanos(Math.max(0, lease.nanosToDeadline())), lease.leaseTime()));
			}
		}
		return details;
	}

	/** What an acquisition of all {@code sorted} keys fails with at its wait time. */
	static LockAcquisitionException notAllAcquired(List<String> sorted, LockSettings settings) {
		return new LockAcquisitionException(String.join(",", sorted), settings.waitTime(), "Locks " + sorted
				+ " not all acquired within " + settings.waitTime().toMillis() + "ms; none of them is held", null);
	}

	/**
	 * The wait ran out while another thread of this JVM holds the key. When that lease
	 * came from {@code acquire} on this very thread, say so: such a lease is not
	 * re-entrant outside its scope, and the caller may have expected it to be.
	 * @param pendingRelease the failure of a release of the key still being retried
	 */
	RuntimeException notAcquired(String key, LockSettings settings, @Nullable LockBackendException pendingRelease) {
		if (pendingRelease != null) {
			return new LockAcquisitionException(key, settings.waitTime(), "Lock '" + key + "' not acquired within "
					+ settings.waitTime().toMillis() + "ms: this JVM's release of it failed because the store could not"
					+ " be reached, and is still being retried; the store holds the lock until that release gets"
					+ " through or its lease ends (the cause is the failed release)", pendingRelease);
		}
		ManagedLease local = this.held.get(key);
		if (local == null || !local.heldNow() || !local.unscopedLeaseOfCurrentThread()) {
			return new LockAcquisitionException(key, settings.waitTime());
		}
		return new LockAcquisitionException(key, settings.waitTime(),
				"Lock '" + key + "' not acquired within " + settings.waitTime().toMillis()
						+ "ms: this thread holds it through a lease from acquire()"
						+ " outside any scope of it, which is not re-entrant (the lease may have been handed to another"
						+ " thread). To re-enter it from nested code, open its scope with LockContext.open(lease), or"
						+ " use execute/run or @DistributedLock, whose bodies are re-entrant",
				null);
	}

	/**
	 * At shutdown: a lock left for a line that nobody took over is released, and every
	 * lease still held is revoked ({@link ManagedLease#revoke}).
	 */
	void close() {
		for (LocalQueue queue : this.lines.queues.values()) {
			ManagedLease left = queue.handover().takeOffer();
			if (left != null) {
				this.held.remove(left.key(), left);
				try {
					Interrupts.setAside(() -> left.handle().release());
				}
				catch (RuntimeException ex) {
					logger.warn("Could not release lock '" + left.key() + "' at shutdown; it expires after its lease",
							ex);
				}
			}
		}
		for (ManagedLease lease : all()) {
			try {
				lease.revoke("the application shut down while the lock was still held; it was released so that"
						+ " others need not wait for its lease to run out");
				logger.info("Released lock '" + lease.key() + "' at shutdown; its holder is told it was lost");
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release lock '" + lease.key() + "' at shutdown; it expires after its lease", ex);
			}
		}
	}

}
