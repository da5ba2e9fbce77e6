package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import org.jspecify.annotations.Nullable;

/**
 * The renewal of one {@link ManagedLease} through the shared {@link RenewalScheduler},
 * and its exclusion with release: release marks the lease released and cancels the next
 * renewal before it deletes the key, and a renewal runs only while the lease is held, so
 * no renewal is ever sent after release. The deadline counts from when a renewal was
 * <em>sent</em>.
 */
final class LeaseRenewal {

	/** The longest a release waits for a renewal on the wire. */
	private static final long RENEWAL_WAIT_NANOS = 200_000_000;

	private final ManagedLease lease;

	private final AtomicReference<ManagedLease.State> state;

	private final RenewalScheduler scheduler;

	private final LockProvider provider;

	private final Duration leaseTime;

	/** Renewal against release; never held while waiting on I/O. */
	private final ReentrantLock lock = new ReentrantLock();

	private final Condition renewalBack = this.lock.newCondition();

	/** A renewal of the lease is on the wire; guarded by {@link #lock}. */
	private boolean renewing;

	private volatile RenewalScheduler.@Nullable Renewal renewal;

	/**
	 * @param state the lease's state, changed to released under this renewal's lock
	 */
	LeaseRenewal(ManagedLease lease, AtomicReference<ManagedLease.State> state, RenewalScheduler scheduler,
			LockProvider provider, Duration leaseTime) {
		this.lease = lease;
		this.state = state;
		this.scheduler = scheduler;
		this.provider = provider;
		this.leaseTime = leaseTime;
	}

	/**
	 * Schedules the first renewal (with auto-renew) and starts the deadline watch.
	 * @param deadlineNanos the deadline the lease starts with
	 */
	void start(boolean autoRenew, long deadlineNanos, DeadlineWatch watch) {
		this.lock.lock();
		try {
			if (autoRenew) {
				scheduleRenewalAfter(deadlineNanos - LockHandle.validityNanos(this.leaseTime));
			}
			watch.start();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Marks the lease released and stops its renewal and deadline watch, waiting briefly
	 * for a renewal on the wire.
	 * @return the state it was in: {@code RELEASED} if it already was
	 */
	ManagedLease.State release(DeadlineWatch watch) {
		this.lock.lock();
		try {
			ManagedLease.State previous = this.state.getAndSet(ManagedLease.State.RELEASED);
			if (previous != ManagedLease.State.RELEASED) {
				cancel();
				watch.cancel();
				awaitRenewalOnTheWire();
			}
			return previous;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * {@link #release} without waiting, unless a renewal is on the wire or being started:
	 * then nothing changes, and the caller releases on a thread that may wait.
	 * @return the state the lease was in, or null if a renewal is on the wire
	 */
	ManagedLease.@Nullable State releaseIfQuiet(DeadlineWatch watch) {
		if (!this.lock.tryLock()) {
			return null;
		}
		try {
			if (this.renewing) {
				return null;
			}
			ManagedLease.State previous = this.state.getAndSet(ManagedLease.State.RELEASED);
			if (previous != ManagedLease.State.RELEASED) {
				cancel();
				watch.cancel();
			}
			return previous;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Waits briefly for a renewal on the wire, as a release does. */
	void awaitQuiet() {
		this.lock.lock();
		try {
			awaitRenewalOnTheWire();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Waits briefly (holding {@link #lock}) for a renewal already sent to come back, so
	 * that in the common case no renewal is on the wire after the release. Never longer
	 * than {@link #RENEWAL_WAIT_NANOS}: a store that does not answer would otherwise make
	 * a release take two store calls' bounds. Going ahead is safe, since renewals are
	 * owner-checked: one that arrives after the release finds the lock not ours.
	 */
	private void awaitRenewalOnTheWire() {
		boolean interrupted = false;
		long left = Math.min(this.provider.callTimeout().toNanos(), RENEWAL_WAIT_NANOS);
		while (this.renewing && left > 0) {
			try {
				left = this.renewalBack.awaitNanos(left);
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * The next renewal is due a third of the lease after the last confirmed command was
	 * <em>sent</em>, the moment the deadline counts from, so a slow reply shortens the
	 * wait rather than eating into the margin. It may go up to half an interval early, to
	 * share a batch with other leases.
	 */
	private void scheduleRenewalAfter(long sentNanos) {
		long interval = renewIntervalNanos();
		this.renewal = this.scheduler.scheduleRenewal(this.lease, sentNanos + interval, interval / 2);
	}

	private long renewIntervalNanos() {
		return Math.max(1, this.leaseTime.toNanos() / 3);
	}

	/**
	 * Called by the scheduler before the lease's renewal is sent.
	 * @return false if the lease is no longer held, and must not be renewed
	 */
	boolean begin() {
		this.lock.lock();
		try {
			if (this.state.get() != ManagedLease.State.HELD) {
				return false;
			}
			this.renewing = true;
			return true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * The outcome of a renewal sent at {@code sentNanos}: {@code renewed} is null when
	 * the store failed ({@code failure}).
	 */
	void done(long sentNanos, @Nullable Boolean renewed, @Nullable RuntimeException failure) {
		this.lock.lock();
		try {
			this.renewing = false;
			try {
				if (this.state.get() == ManagedLease.State.HELD) {
					answered(sentNanos, renewed, failure);
				}
			}
			finally {
				this.renewalBack.signalAll();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Called holding {@link #lock} while the lease is held. */
	private void answered(long sentNanos, @Nullable Boolean renewed, @Nullable RuntimeException failure) {
		if (Boolean.TRUE.equals(renewed)) {
			this.lease.renewedAt(sentNanos);
			scheduleRenewalAfter(sentNanos);
		}
		else if (renewed != null) {
			this.lease.markLost(LockObserver.LossReason.NOT_OWNER,
					"renewal found the key expired or held by another owner");
		}
		else {
			long remaining = this.lease.nanosToDeadline();
			if (remaining <= 0) {
				this.lease.markLost(LockObserver.LossReason.STORE_UNREACHABLE,
						"the store stayed unreachable until the lease deadline ("
								+ ((failure != null) ? failure.getMessage() : "no reply") + ")");
			}
			else {
				long retry = Math.min(renewIntervalNanos(), Math.max(remaining / 2, 1_000_000));
				this.renewal = this.scheduler.scheduleRenewal(this.lease, System.nanoTime() + retry, 0);
			}
		}
	}

	/** Cancels the next renewal, if one is scheduled. */
	void cancel() {
		RenewalScheduler.Renewal next = this.renewal;
		if (next != null) {
			this.scheduler.cancel(next);
		}
	}

}
