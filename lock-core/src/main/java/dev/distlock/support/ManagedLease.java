package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LossReporting;
import dev.distlock.spi.ScopedLease;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.handover.HandedLease;
import dev.distlock.support.handover.HandoverRun;
import dev.distlock.support.handover.HandoverTerms;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The outermost lease of one acquisition: tracks the lease deadline on the monotonic
 * clock, renews itself through the shared {@link RenewalScheduler}, and reports loss.
 *
 * <p>
 * Renewal and release exclude each other on one lock: release marks the lease released
 * and cancels the next renewal before it deletes the key, and a renewal runs only while
 * the lease is held, so no renewal is ever sent after release. The deadline is measured
 * from the moment a command was <em>sent</em>, so it is never later than the expiry the
 * store applies.
 *
 * <p>
 * Who holds the lease, for re-entry and for {@code on-lease-lost: interrupt}: the threads
 * running a scope of it ({@link dev.distlock.LockContext#open}, which {@code execute},
 * {@code run} and the annotation open around their body). Re-entry is granted only inside
 * such a scope, so a lease handed to another thread never lets its first thread back in.
 * With no scope open, a loss interrupts the acquiring thread, as long as no other thread
 * has used the lease.
 */
final class ManagedLease implements Lease, ScopedLease, HandedLease<ManagedLease> {

	private static final Log logger = LogFactory.getLog(ManagedLease.class);

	/** The longest a release waits for a renewal on the wire. */
	private static final long RENEWAL_WAIT_NANOS = 200_000_000;

	private enum State {

		HELD, LOST, RELEASED

	}

	private final LockHandle handle;

	private final LockProvider provider;

	private final LockSettings settings;

	private final RenewalScheduler scheduler;

	private final LeaseHolders holders;

	/**
	 * This holder's fencing token: the store acquisition's, or, for a lock handed over in
	 * memory, the next token of the acquisition's block ({@link TokenBlock}).
	 */
	private final long token;

	/** When the store acquisition this lease continues was sent (monotonic clock). */
	private final long blockSentNanos;

	/**
	 * The run of local hand-overs this lease belongs to, once its store acquisition was
	 * first handed on; set by the releasing thread before the offer, which publishes it.
	 */
	private @Nullable HandoverRun run;

	private final Object template;

	private final Events events;

	private final LeaseLossListener lossListener;

	private final boolean releaseAfterCommit;

	/** Renewal against release; never held while waiting on I/O. */
	private final ReentrantLock lock = new ReentrantLock();

	private final Condition renewalBack = this.lock.newCondition();

	private final DeadlineWatch deadlineWatch;

	/** Set when shutdown already deleted the key, so release does not ask again. */
	private volatile boolean revoked;

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long deadlineNanos;

	private volatile @Nullable String lostReason;

	private volatile RenewalScheduler.@Nullable Renewal renewal;

	/** When the acquire that took the lock was sent, on the monotonic clock. */
	private final long acquiredAtNanos;

	private volatile LockObserver.Holding holding = LockObserver.Holding.NONE;

	/** Told once of a loss: holders whose scope is no thread (a reactive pipeline). */
	private final List<Runnable> lossCallbacks = new CopyOnWriteArrayList<>();

	/** A renewal of this lease is on the wire; guarded by {@link #lock}. */
	private boolean renewing;

	/** What the template that made a lease hears of it. */
	interface Events {

		/**
		 * The lease was released (or released after a loss): it is no longer held here.
		 */
		void ended(ManagedLease lease);

		/**
		 * The lock may be free for this JVM's next waiter: released, or known lost.
		 */
		void freed(String key);

		/**
		 * The releasing thread offers the still-held lock to a waiting thread of this JVM
		 * instead of releasing it in the store.
		 * @return whether it was handed over (then nothing is released in the store)
		 */
		default boolean handOver(ManagedLease lease) {
			return false;
		}

		/**
		 * The lock was released in the store, which says that a waiter of another JVM had
		 * marked it: this JVM's waiters let that one go first.
		 */
		default void releasedToOthers(ManagedLease lease) {
		}

		/**
		 * The release in the store failed with {@code failure} (the store could not be
		 * reached): the caller is told, and the release is tried again in the background
		 * ({@link #retryRelease()}).
		 */
		default void releaseFailed(ManagedLease lease, LockBackendException failure) {
		}

	}

	/**
	 * @param template the template that made the lease: re-entry only ever joins a lease
	 * of the same template
	 * @param acquirer the thread that gets the lease; null for a wait that held no thread
	 */
	ManagedLease(Object template, LockProvider provider, LockHandle handle, LockSettings settings, long sentAtNanos,
			RenewalScheduler scheduler, Events events, LeaseLossListener lossListener, boolean releaseAfterCommit,
			@Nullable Thread acquirer) {
		this(template, provider, handle, settings, scheduler, events, lossListener, releaseAfterCommit,
				handle.fencingToken(), sentAtNanos, sentAtNanos, sentAtNanos + validityNanos(settings.leaseTime()),
				acquirer);
	}

	/**
	 * @param token this holder's fencing token
	 * @param blockSentNanos when the store acquisition was sent
	 * @param acquiredAtNanos when this holder got the lock
	 * @param deadlineNanos the lease deadline this holder starts with
	 * @param acquirer the thread that gets the lease
	 */
	private ManagedLease(Object template, LockProvider provider, LockHandle handle, LockSettings settings,
			RenewalScheduler scheduler, Events events, LeaseLossListener lossListener, boolean releaseAfterCommit,
			long token, long blockSentNanos, long acquiredAtNanos, long deadlineNanos, @Nullable Thread acquirer) {
		this.holders = new LeaseHolders(acquirer);
		this.token = token;
		this.blockSentNanos = blockSentNanos;
		this.template = template;
		this.provider = provider;
		this.handle = handle;
		this.settings = settings;
		this.scheduler = scheduler;
		this.events = events;
		this.lossListener = lossListener;
		this.releaseAfterCommit = releaseAfterCommit;
		this.acquiredAtNanos = acquiredAtNanos;
		this.deadlineNanos = deadlineNanos;
		this.deadlineWatch = new DeadlineWatch(scheduler, () -> this.deadlineNanos,
				() -> this.state.get() == State.HELD,
				() -> markLost(LockObserver.LossReason.EXPIRED, settings.autoRenew()
						? "no renewal was confirmed before the lease deadline (" + settings.leaseTime().toMillis()
								+ "ms after the last confirmed renewal)"
						: "its lease time of " + settings.leaseTime().toMillis() + "ms ran out without renewal"));
	}

	/**
	 * Starts renewal (with auto-renew) and the deadline watch. The watch runs on the
	 * scheduler's collecting thread, which never waits for the store: a lease whose
	 * deadline passes is declared lost then, even while a renewal is stuck. A handle that
	 * reports its own loss ({@link LossReporting}) is listened to from here on: its loss
	 * counts at once, without waiting for a renewal to find it.
	 */
	@Override
	public void start() {
		this.lock.lock();
		try {
			if (this.settings.autoRenew()) {
				scheduleRenewalAfter(this.deadlineNanos - validityNanos(this.settings.leaseTime()));
			}
			this.deadlineWatch.start();
		}
		finally {
			this.lock.unlock();
		}
		if (this.handle instanceof LossReporting reporting) {
			reporting.onLoss((reason) -> markLost("the store reported it lost: " + reason));
		}
	}

	OnLeaseLost onLeaseLost() {
		return this.settings.onLeaseLost();
	}

	/**
	 * Runs {@code callback} once this lease is found lost (at once if it already is), on
	 * the thread that finds it, which must not be kept waiting.
	 * @return removes the callback
	 */
	Runnable whenLost(Runnable callback) {
		this.lossCallbacks.add(callback);
		if (this.state.get() == State.LOST) {
			callback.run();
		}
		return () -> this.lossCallbacks.remove(callback);
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

	@Override
	public LockHandle handle() {
		return this.handle;
	}

	Duration leaseTime() {
		return this.settings.leaseTime();
	}

	/** The options it was taken with: its mode and permits decide re-entry. */
	LockSettings settings() {
		return this.settings;
	}

	/** The lock's name from its options, or null. */
	@Nullable String name() {
		return this.settings.name();
	}

	/**
	 * When the acquire was sent (or the lock handed over to this holder), on the
	 * monotonic clock.
	 */
	long acquiredAtNanos() {
		return this.acquiredAtNanos;
	}

	@Override
	public long blockSentNanos() {
		return this.blockSentNanos;
	}

	/** This holder's fencing token, without counting as a use. */
	@Override
	public long token() {
		return this.token;
	}

	/**
	 * The lease of the next local holder of this lock, on the releasing thread, once this
	 * lease is released: the same store acquisition with the next token of its block and
	 * this lease's deadline, renewed from here on for {@code acquirer}. The caller has
	 * checked that a token is left and that the settings match.
	 */
	ManagedLease successor(LockSettings settings, @Nullable Thread acquirer, long now) {
		ManagedLease next = new ManagedLease(this.template, this.provider, this.handle, settings, this.scheduler,
				this.events, this.lossListener, this.releaseAfterCommit, this.token + 1, this.blockSentNanos, now,
				this.deadlineNanos, acquirer);
		next.run = this.run;
		return next;
	}

	@Override
	public @Nullable HandoverRun run() {
		return this.run;
	}

	@Override
	public void joinRun(HandoverRun run) {
		this.run = run;
	}

	@Override
	public HandoverTerms terms() {
		return this.settings;
	}

	@Override
	public void lostInStore(String reason) {
		markLost(LockObserver.LossReason.NOT_OWNER, reason);
	}

	/** The names of the threads holding it, for the endpoint. */
	List<String> holderNames() {
		return this.holders.toTell().stream().map(Thread::getName).toList();
	}

	/** Tells {@code holding} how this hold ends. */
	void observe(LockObserver.Holding holding) {
		this.holding = holding;
	}

	@Override
	public String key() {
		return this.handle.key();
	}

	@Override
	public long fencingToken() {
		this.holders.used();
		return this.token;
	}

	@Override
	public boolean isHeld() {
		this.holders.used();
		return heldNow();
	}

	/** {@link #isHeld()} for the machinery: does not count as a use by this thread. */
	boolean heldNow() {
		if (this.state.get() == State.HELD && System.nanoTime() - this.deadlineNanos >= 0) {
			markLost(LockObserver.LossReason.EXPIRED,
					"its lease time of " + this.settings.leaseTime().toMillis() + "ms ran out without renewal");
		}
		return this.state.get() == State.HELD;
	}

	@Override
	public long nanosToDeadline() {
		return this.deadlineNanos - System.nanoTime();
	}

	/**
	 * Whether the current thread may re-enter this lease: it runs a scope of it, the
	 * lease is held, and it belongs to {@code template}.
	 */
	boolean reentrantFor(Object template) {
		return this.template == template && this.holders.inScope() && heldNow();
	}

	/**
	 * Whether a scope that a context carries may re-enter this lease: it is held and
	 * belongs to {@code template}.
	 */
	boolean reentrantInContextFor(Object template) {
		return this.template == template && heldNow();
	}

	/** Whether this is a lease, not in any scope, that the current thread acquired. */
	boolean unscopedLeaseOfCurrentThread() {
		return this.holders.acquiredOutsideAnyScope();
	}

	@Override
	public void scopeOpened() {
		this.holders.scopeOpened();
	}

	@Override
	public void scopeClosed() {
		this.holders.scopeClosed();
	}

	/** Another level of reentrancy by a thread running a scope of this lease. */
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

	/**
	 * Releases once, and tells the observer how the hold ended. With a minimum hold time
	 * not yet over, the lock is not deleted: its lease in the store is shortened to what
	 * is left of that time (an owner-checked renewal), so it frees itself then, and no
	 * thread of this JVM waits for it.
	 */
	@Override
	public void release() {
		LockObserver.HoldOutcome outcome;
		RuntimeException failure = null;
		try {
			if (!releaseOnce()) {
				return;
			}
			outcome = LockObserver.HoldOutcome.RELEASED;
		}
		catch (LeaseLostException ex) {
			outcome = LockObserver.HoldOutcome.LEASE_LOST;
			failure = ex;
		}
		catch (RuntimeException ex) {
			outcome = LockObserver.HoldOutcome.RELEASE_FAILED;
			failure = ex;
		}
		LockObserver.HoldOutcome ended = outcome;
		RuntimeException error = failure;
		CompositeLockObserver.safely(() -> this.holding.ended(ended, error));
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * @return false if the lease had already been released
	 */
	private boolean releaseOnce() {
		this.holders.used();
		State previous;
		this.lock.lock();
		try {
			previous = this.state.getAndSet(State.RELEASED);
			if (previous == State.RELEASED) {
				return false;
			}
			cancelRenewal();
			this.deadlineWatch.cancel();
			awaitRenewalOnTheWire();
		}
		finally {
			this.lock.unlock();
		}
		boolean wasLost = (previous == State.LOST);
		long handedOver = System.nanoTime();
		if (previous == State.HELD && this.events.handOver(this)) {
			// Still registered: the thread that takes it over replaces it. This holder
			// is told whether the store still held the lock after it let go.
			confirmHandedOver(handedOver);
			return true;
		}
		try {
			endInStoreAndSignal(wasLost, handedOver);
		}
		finally {
			// Still registered while the store call runs, so that a local waiter that
			// finds
			// the key busy meanwhile knows that this JVM holds it.
			this.events.ended(this);
		}
		return true;
	}

	/**
	 * After a hand-over: waits for an owner check sent after this holder let go (or the
	 * release that ended the run), so that a lock the store lost meanwhile is reported to
	 * this holder as a release to the store would report it. One store timeout at most,
	 * as a release to the store ({@link HandoverRun#heldSince(long)}).
	 */
	private void confirmHandedOver(long sinceNanos) {
		HandoverRun handedOn = this.run;
		if (handedOn == null || handedOn.heldSince(sinceNanos)) {
			return;
		}
		this.lostReason = "the key had expired or was held by another owner when an owner check after its local"
				+ " hand-over asked";
		throw lostException();
	}

	/**
	 * Deletes the lock in the store (owner-checked) as the end of its run of hand-overs,
	 * if it had one: for a lock left for the line that nobody took over.
	 * @return whether it was still held
	 */
	boolean releaseInStore() {
		HandoverRun handedOn = this.run;
		return (handedOn != null) ? handedOn.end(this.handle::release) : this.handle.release();
	}

	/**
	 * @param wasLost whether the lease was known lost before the release
	 * @param releasedNanos when its holder released it: a release that fails after the
	 * deadline had passed then reports the loss, with the failure attached, whatever the
	 * store would have answered (a holder paused past its deadline releases before the
	 * deadline watch, paused with it, has marked the lease lost)
	 */
	private void endInStoreAndSignal(boolean wasLost, long releasedNanos) {
		if (this.revoked) {
			this.events.freed(key());
			throw lostException();
		}
		boolean deleted;
		try {
			deleted = releaseUninterruptibly();
		}
		catch (RuntimeException ex) {
			if (ex instanceof LockBackendException unreachable) {
				this.events.releaseFailed(this, unreachable);
			}
			this.events.freed(key());
			if (!wasLost && releasedNanos - this.deadlineNanos < 0) {
				throw ex;
			}
			if (this.lostReason == null) {
				this.lostReason = "its lease deadline had passed when it was released, and the release failed";
			}
			// The loss is what the caller must hear about; the failed clean-up is detail.
			LeaseLostException lost = lostException();
			lost.addSuppressed(ex);
			throw lost;
		}
		if (deleted && this.handle instanceof TokenBlock block && block.releasedToWaiters()) {
			this.events.releasedToOthers(this);
		}
		this.events.freed(key());
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
		return Interrupts
			.setAsideAndRetry((attempt) -> endInStore() || (attempt > 1 && System.nanoTime() - this.deadlineNanos < 0));
	}

	/**
	 * A release of this lease in the store that failed, tried again: as the release
	 * itself (owner-checked, so never anyone else's lock).
	 * @return whether the lock was still this lease's
	 * @throws LockBackendException if the store failed again
	 */
	boolean retryRelease() {
		return endInStore();
	}

	/**
	 * Deletes the lock, or, while the minimum hold time is not over, shortens its lease
	 * to what is left of it (down to a millisecond). Shutdown always deletes.
	 * @return whether the lock was still ours
	 */
	private boolean endInStore() {
		long left = this.acquiredAtNanos + this.settings.minHoldTime().toNanos() - System.nanoTime();
		HandoverRun handedOn = this.run;
		if (left >= 1_000_000 && this.state.get() == State.RELEASED) {
			Duration rest = Duration.ofMillis(TimeUnit.NANOSECONDS.toMillis(left) + 1);
			return (handedOn != null) ? handedOn.end(() -> this.handle.renew(rest)) : this.handle.renew(rest);
		}
		return releaseInStore();
	}

	private LeaseLostException lostException() {
		return new LeaseLostException(key(), "Lease on lock '" + key() + "' (fencing token " + this.token
				+ ") was lost while held: " + this.lostReason);
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
	 * Shutdown: the lease is declared lost (its holders are told, as for any loss) and
	 * the lock is deleted in the store, so that the next holder need not wait for the
	 * lease to run out. The holder's own {@link #release()} then throws
	 * {@link LeaseLostException}.
	 */
	void revoke(String reason) {
		markLost(LockObserver.LossReason.SHUTDOWN, reason);
		if (this.state.get() != State.LOST) {
			return;
		}
		this.lock.lock();
		try {
			awaitRenewalOnTheWire();
		}
		finally {
			this.lock.unlock();
		}
		try {
			releaseUninterruptibly();
		}
		finally {
			this.revoked = true;
			this.events.freed(key());
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

	/** How long after a command was sent the lease counts as held here. */
	static long validityNanos(Duration leaseTime) {
		return LockHandle.validityNanos(leaseTime);
	}

	private long renewIntervalNanos() {
		return Math.max(1, this.settings.leaseTime().toNanos() / 3);
	}

	/**
	 * Called by the scheduler before this lease's renewal is sent.
	 * @return false if the lease is no longer held, and must not be renewed
	 */
	boolean beginRenewal() {
		this.lock.lock();
		try {
			if (this.state.get() != State.HELD) {
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
	void renewalDone(long sentNanos, @Nullable Boolean renewed, @Nullable RuntimeException failure) {
		this.lock.lock();
		try {
			this.renewing = false;
			try {
				if (this.state.get() != State.HELD) {
					return;
				}
				if (Boolean.TRUE.equals(renewed)) {
					this.deadlineNanos = sentNanos + validityNanos(this.settings.leaseTime());
					scheduleRenewalAfter(sentNanos);
				}
				else if (renewed != null) {
					markLost(LockObserver.LossReason.NOT_OWNER,
							"renewal found the key expired or held by another owner");
				}
				else {
					long remaining = this.deadlineNanos - System.nanoTime();
					if (remaining <= 0) {
						markLost(LockObserver.LossReason.STORE_UNREACHABLE,
								"the store stayed unreachable until the lease deadline ("
										+ ((failure != null) ? failure.getMessage() : "no reply") + ")");
					}
					else {
						long retry = Math.min(renewIntervalNanos(), Math.max(remaining / 2, 1_000_000));
						this.renewal = this.scheduler.scheduleRenewal(this, System.nanoTime() + retry, 0);
					}
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

	private void markLost(String reason) {
		markLost(LockObserver.LossReason.OTHER, reason);
	}

	private void markLost(LockObserver.LossReason kind, String reason) {
		if (this.state.get() != State.HELD) {
			return;
		}
		this.lostReason = reason;
		if (!this.state.compareAndSet(State.HELD, State.LOST)) {
			return;
		}
		cancelRenewal();
		this.deadlineWatch.cancel();
		List<Thread> holders = this.holders.toTell();
		String names = holders.isEmpty() ? "no thread runs a scope of it"
				: "held by " + holders.stream().map((t) -> "'" + t.getName() + "'").collect(Collectors.joining(", "));
		logger.warn(
				"Lost the lease on lock '" + key() + "' (fencing token " + this.token + ", " + names + "): " + reason);
		if (this.settings.onLeaseLost() == OnLeaseLost.INTERRUPT) {
			holders.forEach(Thread::interrupt);
		}
		this.events.freed(key());
		for (Runnable callback : this.lossCallbacks) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				logger.error("A loss callback failed for lock '" + key() + "'", ex);
			}
		}
		try {
			this.lossListener.leaseLost(this, kind, reason, holders.isEmpty() ? null : holders.get(0));
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

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", token=" + this.token + ", state=" + this.state.get() + "]";
	}

}
