package dev.distlock.support;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.spi.LockHandle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The outermost lease of one acquisition: tracks the lease deadline on the monotonic clock, renews itself
 * through the shared {@link RenewalScheduler}, and reports loss.
 *
 * <p>Renewal and release exclude each other on one monitor: release marks the lease released and cancels the
 * next renewal before it deletes the key, and a renewal runs only while the lease is held, so no renewal is
 * ever sent after release. The deadline is measured from the moment a command was <em>sent</em>, so it is never
 * later than the expiry Redis applies.
 */
final class ManagedLease implements Lease {

	private static final Log logger = LogFactory.getLog(ManagedLease.class);

	private enum State {

		HELD, LOST, RELEASED

	}

	private final LockHandle handle;

	private final LockSettings settings;

	private final RenewalScheduler scheduler;

	private final Thread owner;

	private final Consumer<ManagedLease> onEnd;

	private final Object monitor = new Object();

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long deadlineNanos;

	private volatile @Nullable String lostReason;

	private volatile @Nullable ScheduledFuture<?> renewal;

	ManagedLease(LockHandle handle, LockSettings settings, long sentAtNanos, RenewalScheduler scheduler,
			Consumer<ManagedLease> onEnd) {
		this.handle = handle;
		this.settings = settings;
		this.scheduler = scheduler;
		this.owner = Thread.currentThread();
		this.onEnd = onEnd;
		this.deadlineNanos = sentAtNanos + settings.leaseTime().toNanos();
	}

	void startRenewal() {
		if (this.settings.autoRenew()) {
			synchronized (this.monitor) {
				scheduleRenewal(renewIntervalNanos());
			}
		}
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
			throw new LeaseLostException(key(), "Cannot re-enter lock '" + key() + "': the outer lease was lost ("
					+ this.lostReason + ")");
		}
		return new NestedLease(this);
	}

	/**
	 * A nested lease ends. The lock stays held until the outermost lease is released; a loss is reported to
	 * every level that held the lease when it was lost.
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
		}
		boolean wasLost = (previous == State.LOST);
		this.onEnd.accept(this);
		boolean deleted = this.handle.release();
		if (wasLost || !deleted) {
			if (this.lostReason == null) {
				this.lostReason = "the key had expired or was held by another owner at release";
			}
			throw lostException();
		}
	}

	private LeaseLostException lostException() {
		return new LeaseLostException(key(), "Lease on lock '" + key() + "' (fencing token " + fencingToken()
				+ ") was lost while held: " + this.lostReason);
	}

	private long renewIntervalNanos() {
		return Math.max(1, this.settings.leaseTime().toNanos() / 3);
	}

	private void scheduleRenewal(long delayNanos) {
		this.renewal = this.scheduler.schedule(this::renew, delayNanos);
	}

	private void renew() {
		synchronized (this.monitor) {
			if (this.state.get() != State.HELD) {
				return;
			}
			long sent = System.nanoTime();
			try {
				if (this.handle.renew(this.settings.leaseTime())) {
					this.deadlineNanos = sent + this.settings.leaseTime().toNanos();
					scheduleRenewal(renewIntervalNanos());
				}
				else {
					markLost("renewal found the key expired or held by another owner");
				}
			}
			catch (RuntimeException ex) {
				long remaining = this.deadlineNanos - System.nanoTime();
				if (remaining <= 0) {
					markLost("the store stayed unreachable until the lease deadline (" + ex.getMessage() + ")");
				}
				else {
					logger.debug("Renewal of lock '" + key() + "' failed; retrying before the lease deadline", ex);
					scheduleRenewal(Math.min(renewIntervalNanos(), Math.max(remaining / 2, 1_000_000)));
				}
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
		logger.warn("Lost the lease on lock '" + key() + "' (fencing token " + fencingToken() + "): " + reason);
	}

	private void cancelRenewal() {
		ScheduledFuture<?> next = this.renewal;
		if (next != null) {
			next.cancel(false);
		}
	}

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", token=" + fencingToken() + ", state=" + this.state.get() + "]";
	}

}
