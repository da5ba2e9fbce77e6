package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderSettings;
import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.LockHandle;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One instance's candidacy in one leader election, on one thread of its own: it campaigns
 * with {@link LockTemplate#tryAcquire} on {@code leader:<name>} (a renewed lease), and
 * while it leads it revokes the term when the lease is lost, when no renewal was
 * confirmed within the renew deadline, and when it yields or stops.
 *
 * <p>
 * The renew deadline is read from the lease's own deadline (the last confirmed renewal
 * was sent one validity before it), so it counts from the same moment the store's expiry
 * does, on the monotonic clock. While it leads, the thread sleeps until that deadline: a
 * timer that, when it fires, either revokes the term or, if a renewal moved the deadline
 * meanwhile, sleeps until the new one. It wakes early only for a yield, a stop, or the
 * loss of the lease, which interrupts it as the lease's holder
 * ({@link OnLeaseLost#INTERRUPT}).
 */
public final class Campaign implements LeaderElection {

	private static final Log logger = LogFactory.getLog(Campaign.class);

	private final LockTemplate template;

	private final String name;

	private final String instanceId;

	private final LeaderSettings settings;

	private final List<LeaderListener> listeners;

	private final LockOptions options;

	/** Confirmed lease time left at the renew deadline. */
	private final long marginNanos;

	/** Interrupting the campaign thread against its leaving the store call. */
	private final ReentrantLock interruptGuard = new ReentrantLock();

	/** Starting against stopping. */
	private final ReentrantLock lifecycle = new ReentrantLock();

	/**
	 * The campaign thread is waiting in the store; guarded by {@link #interruptGuard}.
	 */
	private boolean campaigning;

	private volatile @Nullable Thread thread;

	private volatile boolean running;

	private volatile @Nullable Lease term;

	private volatile boolean yieldRequested;

	private volatile long campaignAfterNanos = System.nanoTime();

	public Campaign(LockTemplate template, String name, String instanceId, LeaderSettings settings,
			List<LeaderListener> listeners) {
		this.template = template;
		this.name = name;
		this.instanceId = instanceId;
		this.settings = settings;
		this.listeners = List.copyOf(listeners);
		this.options = LockOptions.builder()
			.waitTime(settings.retryPeriod())
			.leaseTime(settings.leaseTime())
			.autoRenew(true)
			.onLeaseLost(OnLeaseLost.INTERRUPT)
			.name("leader:" + name)
			.build();
		this.marginNanos = LockHandle.validityNanos(settings.leaseTime()) - settings.renewDeadline().toNanos();
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public String instanceId() {
		return this.instanceId;
	}

	/** The key the role is held on. */
	public String key() {
		return "leader:" + this.name;
	}

	/** The timing of this election. */
	public LeaderSettings settings() {
		return this.settings;
	}

	@Override
	public boolean isLeader() {
		Lease lease = this.term;
		return lease != null && !this.yieldRequested && confirmedNanosLeft(lease) > 0;
	}

	@Override
	public OptionalLong currentToken() {
		Lease lease = this.term;
		return (lease != null && isLeader()) ? OptionalLong.of(token(lease)) : OptionalLong.empty();
	}

	@Override
	public void yield() {
		if (this.term != null) {
			this.yieldRequested = true;
			wake();
		}
	}

	/** Starts campaigning on a thread of its own; does nothing if running. */
	public void start() {
		this.lifecycle.lock();
		try {
			if (this.running) {
				return;
			}
			this.running = true;
			Thread campaign = new Thread(this::run, "distlock-leader-" + this.name);
			campaign.setDaemon(true);
			this.thread = campaign;
			campaign.start();
		}
		finally {
			this.lifecycle.unlock();
		}
	}

	/**
	 * Stops campaigning; a leader is revoked and releases the role. Waits for that, at
	 * most a lease time.
	 */
	public void stop() {
		this.lifecycle.lock();
		try {
			Thread campaign = this.thread;
			if (!this.running || campaign == null) {
				return;
			}
			this.running = false;
			interruptIfCampaigning(campaign);
			LockSupport.unpark(campaign);
			campaign.join(this.settings.leaseTime().toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			this.lifecycle.unlock();
		}
	}

	/** Only a wait in the store is interrupted, never a release. */
	private void interruptIfCampaigning(Thread campaign) {
		this.interruptGuard.lock();
		try {
			if (this.campaigning) {
				campaign.interrupt();
			}
		}
		finally {
			this.interruptGuard.unlock();
		}
	}

	private boolean campaigning(boolean campaigning) {
		this.interruptGuard.lock();
		try {
			if (campaigning && !this.running) {
				return false;
			}
			this.campaigning = campaigning;
			return true;
		}
		finally {
			this.interruptGuard.unlock();
		}
	}

	private void wake() {
		Thread campaign = this.thread;
		if (campaign != null) {
			LockSupport.unpark(campaign);
		}
	}

	private void run() {
		while (this.running) {
			long backoff = this.campaignAfterNanos - System.nanoTime();
			if (backoff > 0) {
				LockSupport.parkNanos(this, backoff);
				continue;
			}
			Lease lease = campaign();
			if (lease != null) {
				lead(lease);
			}
		}
	}

	private @Nullable Lease campaign() {
		if (!campaigning(true)) {
			return null;
		}
		try {
			return this.template.tryAcquire(key(), this.options).orElse(null);
		}
		catch (LockAcquisitionException ex) {
			return null;
		}
		catch (RuntimeException ex) {
			logger.warn("Leader election '" + this.name + "' could not reach the store; retrying in "
					+ this.settings.retryPeriod().toMillis() + "ms", ex);
			this.campaignAfterNanos = System.nanoTime() + this.settings.retryPeriod().toNanos();
			return null;
		}
		finally {
			campaigning(false);
			Thread.interrupted();
		}
	}

	private void lead(Lease lease) {
		long token = token(lease);
		if (!this.running) {
			releaseQuietly(lease);
			return;
		}
		this.yieldRequested = false;
		this.term = lease;
		logger.info("Instance '" + this.instanceId + "' leads '" + this.name + "' (term token " + token + ")");
		for (LeaderListener listener : this.listeners) {
			safely(() -> listener.granted(this, token));
		}
		LeaderListener.Reason reason = watch(lease);
		this.term = null;
		this.yieldRequested = false;
		logger.info("Instance '" + this.instanceId + "' no longer leads '" + this.name + "' (term token " + token
				+ "): " + reason);
		for (LeaderListener listener : this.listeners) {
			safely(() -> listener.revoked(this, token, reason));
		}
		if (reason == LeaderListener.Reason.YIELDED) {
			this.campaignAfterNanos = System.nanoTime() + this.settings.yieldBackoff().toNanos();
		}
		releaseQuietly(lease);
		// a loss found while the term was ending would otherwise cut the next wait short
		Thread.interrupted();
	}

	/**
	 * Waits until the term ends, and says why: sleeps until the renew deadline, woken
	 * early by {@link #yield()}, {@link #stop()} or a loss of the lease (an interrupt).
	 */
	private LeaderListener.Reason watch(Lease lease) {
		while (true) {
			// a loss interrupts this thread to wake it; the lease's state tells the rest
			Thread.interrupted();
			if (!this.running) {
				return LeaderListener.Reason.SHUTDOWN;
			}
			if (this.yieldRequested) {
				return LeaderListener.Reason.YIELDED;
			}
			if (!held(lease)) {
				return LeaderListener.Reason.LEASE_LOST;
			}
			long left = confirmedNanosLeft(lease);
			if (left <= 0) {
				return LeaderListener.Reason.RENEWAL_FAILED;
			}
			LockSupport.parkNanos(this, left);
		}
	}

	/**
	 * Until the renew deadline: the lease's own deadline (one validity after the last
	 * confirmed renewal was sent) less what the renew deadline leaves of that validity. A
	 * lease of another kind has no visible deadline, and counts while held.
	 */
	private long confirmedNanosLeft(Lease lease) {
		if (lease instanceof ManagedLease managed) {
			return managed.heldNow() ? managed.nanosToDeadline() - this.marginNanos : 0;
		}
		return lease.isHeld() ? Long.MAX_VALUE : 0;
	}

	private static boolean held(Lease lease) {
		return (lease instanceof ManagedLease managed) ? managed.heldNow() : lease.isHeld();
	}

	private static long token(Lease lease) {
		return (lease instanceof ManagedLease managed) ? managed.token() : lease.fencingToken();
	}

	private void releaseQuietly(Lease lease) {
		try {
			lease.release();
		}
		catch (RuntimeException ex) {
			logger.debug("Releasing the role of leader election '" + this.name + "' failed", ex);
		}
	}

	private void safely(Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			logger.error("A listener of leader election '" + this.name + "' failed", ex);
		}
	}

	@Override
	public String toString() {
		return "LeaderElection[name=" + this.name + ", instance=" + this.instanceId + ", leader=" + isLeader() + "]";
	}

}
