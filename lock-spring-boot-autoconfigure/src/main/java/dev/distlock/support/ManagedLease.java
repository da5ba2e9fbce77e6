package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The outermost lease of one acquisition: tracks the lease deadline on the monotonic
 * clock, renews itself through the shared {@link RenewalScheduler}, and reports loss.
 *
 * <p>
 * Renewal and release exclude each other on one monitor: release marks the lease released
 * and cancels the next renewal before it deletes the key, and a renewal runs only while
 * the lease is held, so no renewal is ever sent after release. The deadline is measured
 * from the moment a command was <em>sent</em>, so it is never later than the expiry Redis
 * applies.
 */
final class ManagedLease implements Lease {

	private static final Log logger = LogFactory.getLog(ManagedLease.class);

	private enum State {

		HELD, LOST, RELEASED

	}

	private final LockHandle handle;

	private final LockProvider provider;

	private final LockSettings settings;

	private final RenewalScheduler scheduler;

	private final Thread owner;

	private final Consumer<ManagedLease> onEnd;

	private final LeaseLossListener lossListener;

	private final boolean releaseAfterCommit;

	private final Object monitor = new Object();

	/**
	 * Guards re-arming the deadline check against release cancelling it; never held while
	 * waiting on I/O.
	 */
	private final Object deadlineCheckMonitor = new Object();

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long deadlineNanos;

	private volatile @Nullable String lostReason;

	private volatile RenewalScheduler.@Nullable Renewal renewal;

	/** A renewal of this lease is on the wire; guarded by {@link #monitor}. */
	private boolean renewing;

	private final Runnable afterRelease;

	private volatile RenewalScheduler.@Nullable DeadlineCheck deadlineCheck;

	ManagedLease(LockProvider provider, LockHandle handle, LockSettings settings, long sentAtNanos,
			RenewalScheduler scheduler, Consumer<ManagedLease> onEnd, Runnable afterRelease,
			LeaseLossListener lossListener, boolean releaseAfterCommit) {
		this.provider = provider;
		this.afterRelease = afterRelease;
		this.handle = handle;
		this.settings = settings;
		this.scheduler = scheduler;
		this.owner = Thread.currentThread();
		this.onEnd = onEnd;
		this.lossListener = lossListener;
		this.releaseAfterCommit = releaseAfterCommit;
		this.deadlineNanos = sentAtNanos + settings.leaseTime().toNanos();
	}

	/**
	 * Starts renewal (with auto-renew) and the deadline watch. The watch runs on the
	 * scheduler's collecting thread, which never waits for the store: a lease whose
	 * deadline passes is declared lost then, even while a renewal is stuck.
	 */
	void start() {
		synchronized (this.monitor) {
			if (this.settings.autoRenew()) {
				scheduleRenewalAfter(this.deadlineNanos - this.settings.leaseTime().toNanos());
			}
			scheduleDeadlineCheck();
		}
	}

	OnLeaseLost onLeaseLost() {
		return this.settings.onLeaseLost();
	}

	/**
	 * Whether a release at the end of a locked call waits for an active transaction to
	 * complete.
	 */
	boolean releaseAfterCommit() {
		return this.releaseAfterCommit;
	}

	LockProvider provider() {
		return this.provider;
	}

	LockHandle handle() {
		return this.handle;
	}

	Duration leaseTime() {
		return this.settings.leaseTime();
	}

	@Override
	public String key() {
		return this.handle.key();
	}

	@Override
	public long fencingToken() {
		return this.handle.fencingToken();
	}

	Thread owner() {
		return this.owner;
	}

	@Override
	public boolean isHeld() {
		if (this.state.get() == State.HELD && System.nanoTime() - this.deadlineNanos >= 0) {
			markLost("its lease time of " + this.settings.leaseTime().toMillis() + "ms ran out without renewal");
		}
		return this.state.get() == State.HELD;
	}

	/** Another level of reentrancy by the owning thread. */
	Lease enter() {
		if (!isHeld()) {
			throw new LeaseLostException(key(),
					"Cannot re-enter lock '" + key() + "': the outer lease was lost (" + this.lostReason + ")");
		}
		return new NestedLease(this);
	}

	/**
	 * A nested lease ends. The lock stays held until the outermost lease is released; a
	 * loss is reported to every level that held the lease when it was lost.
	 */
	void exitNested() {
		if (this.state.get() != State.RELEASED && !isHeld()) {
			throw lostException();
		}
	}

	@Override
	public void release() {
		State previous;
		synchronized (this.monitor) {
			previous = this.state.getAndSet(State.RELEASED);
			if (previous == State.RELEASED) {
				return;
			}
			cancelRenewal();
			cancelDeadlineCheck();
			awaitRenewalOnTheWire();
		}
		boolean wasLost = (previous == State.LOST);
		this.onEnd.accept(this);
		boolean deleted;
		try {
			deleted = releaseUninterruptibly();
		}
		catch (RuntimeException ex) {
			this.afterRelease.run();
			if (!wasLost) {
				throw ex;
			}
			// The loss is what the caller must hear about; the failed clean-up is detail.
			LeaseLostException lost = lostException();
			lost.addSuppressed(ex);
			throw lost;
		}
		this.afterRelease.run();
		if (wasLost || !deleted) {
			if (this.lostReason == null) {
				this.lostReason = "the key had expired or was held by another owner at release";
			}
			throw lostException();
		}
	}

	/**
	 * An interrupted holder still releases: otherwise its lock would block everyone for
	 * the rest of the lease. The call runs with the interrupt flag set aside (the caller
	 * gets it back), and a call that an interrupt cut short is asked again: the release
	 * is owner-checked, so asking twice deletes nothing of anyone else's. When the second
	 * answer is "not ours" and the deadline has not passed, the first call is what
	 * deleted the key, since an unexpired lease can only have been lost to a failover or
	 * a manual delete.
	 */
	private boolean releaseUninterruptibly() {
		boolean interrupted = Thread.interrupted();
		try {
			for (int attempt = 1;; attempt++) {
				try {
					return this.handle.release() || (attempt > 1 && System.nanoTime() - this.deadlineNanos < 0);
				}
				catch (RuntimeException ex) {
					if (!Thread.interrupted() || attempt == 10) {
						throw ex;
					}
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private LeaseLostException lostException() {
		return new LeaseLostException(key(), "Lease on lock '" + key() + "' (fencing token " + fencingToken()
				+ ") was lost while held: " + this.lostReason);
	}

	/**
	 * Waits (under {@link #monitor}) for a renewal already sent to come back, so that no
	 * renewal is ever on the wire after the release.
	 */
	private void awaitRenewalOnTheWire() {
		boolean interrupted = false;
		while (this.renewing) {
			try {
				this.monitor.wait();
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
		this.renewal = this.scheduler.scheduleRenewal(this, sentNanos + interval, interval / 2);
	}

	private long renewIntervalNanos() {
		return Math.max(1, this.settings.leaseTime().toNanos() / 3);
	}

	private void scheduleDeadlineCheck() {
		long delay = Math.max(0, this.deadlineNanos - System.nanoTime());
		this.deadlineCheck = this.scheduler.scheduleDeadlineCheck(this::checkDeadline, delay);
	}

	/**
	 * Re-arms itself while renewals keep moving the deadline; declares the lease lost
	 * once it passes.
	 */
	private void checkDeadline() {
		if (this.state.get() != State.HELD) {
			return;
		}
		if (System.nanoTime() - this.deadlineNanos >= 0) {
			markLost(this.settings.autoRenew()
					? "no renewal was confirmed before the lease deadline (" + this.settings.leaseTime().toMillis()
							+ "ms after the last confirmed renewal)"
					: "its lease time of " + this.settings.leaseTime().toMillis() + "ms ran out without renewal");
			return;
		}
		synchronized (this.deadlineCheckMonitor) {
			if (this.state.get() == State.HELD) {
				scheduleDeadlineCheck();
			}
		}
	}

	/**
	 * Called by the scheduler before this lease's renewal is sent.
	 * @return false if the lease is no longer held, and must not be renewed
	 */
	boolean beginRenewal() {
		synchronized (this.monitor) {
			if (this.state.get() != State.HELD) {
				return false;
			}
			this.renewing = true;
			return true;
		}
	}

	/**
	 * The outcome of a renewal sent at {@code sentNanos}: {@code renewed} is null when
	 * the store failed ({@code failure}).
	 */
	void renewalDone(long sentNanos, @Nullable Boolean renewed, @Nullable RuntimeException failure) {
		synchronized (this.monitor) {
			this.renewing = false;
			try {
				if (this.state.get() != State.HELD) {
					return;
				}
				if (Boolean.TRUE.equals(renewed)) {
					this.deadlineNanos = sentNanos + this.settings.leaseTime().toNanos();
					scheduleRenewalAfter(sentNanos);
				}
				else if (renewed != null) {
					markLost("renewal found the key expired or held by another owner");
				}
				else {
					long remaining = this.deadlineNanos - System.nanoTime();
					if (remaining <= 0) {
						markLost("the store stayed unreachable until the lease deadline ("
								+ ((failure != null) ? failure.getMessage() : "no reply") + ")");
					}
					else {
						long retry = Math.min(renewIntervalNanos(), Math.max(remaining / 2, 1_000_000));
						this.renewal = this.scheduler.scheduleRenewal(this, System.nanoTime() + retry, 0);
					}
				}
			}
			finally {
				this.monitor.notifyAll();
			}
		}
	}

	private void markLost(String reason) {
		if (this.state.get() != State.HELD) {
			return;
		}
		this.lostReason = reason;
		if (!this.state.compareAndSet(State.HELD, State.LOST)) {
			return;
		}
		cancelRenewal();
		cancelDeadlineCheck();
		logger.warn("Lost the lease on lock '" + key() + "' (fencing token " + fencingToken() + ", held by thread '"
				+ this.owner.getName() + "'): " + reason);
		if (this.settings.onLeaseLost() == OnLeaseLost.INTERRUPT) {
			this.owner.interrupt();
		}
		try {
			this.lossListener.leaseLost(this, reason, this.owner);
		}
		catch (RuntimeException ex) {
			logger.error("Lease loss listener failed for lock '" + key() + "'", ex);
		}
	}

	private void cancelRenewal() {
		RenewalScheduler.Renewal next = this.renewal;
		if (next != null) {
			this.scheduler.cancel(next);
		}
	}

	private void cancelDeadlineCheck() {
		synchronized (this.deadlineCheckMonitor) {
			RenewalScheduler.DeadlineCheck next = this.deadlineCheck;
			if (next != null) {
				this.scheduler.cancel(next);
			}
		}
	}

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", token=" + fencingToken() + ", state=" + this.state.get() + "]";
	}

}
