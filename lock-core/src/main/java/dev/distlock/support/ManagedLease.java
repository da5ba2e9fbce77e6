package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LossReporting;
import dev.distlock.spi.ScopedLease;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.handover.HandedLease;
import dev.distlock.support.handover.HandoverRun;
import dev.distlock.support.handover.HandoverTerms;
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

	enum State {

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

	private final LeaseEvents events;

	private final LeaseLossListener lossListener;

	private final boolean releaseAfterCommit;

	/** Renewal, and its exclusion with release. */
	private final LeaseRenewal renewals;

	private final DeadlineWatch deadlineWatch;

	/** Set when shutdown already deleted the key, so release does not ask again. */
	private volatile boolean revoked;

	private final AtomicReference<State> state = new AtomicReference<>(State.HELD);

	private volatile long deadlineNanos;

	private volatile @Nullable String lostReason;

	/** When the acquire that took the lock was sent, on the monotonic clock. */
	private final long acquiredAtNanos;

	private volatile LockObserver.Holding holding = LockObserver.Holding.NONE;

	/** Told once of a loss: holders whose scope is no thread (a reactive pipeline). */
	private final List<Runnable> lossCallbacks = new CopyOnWriteArrayList<>();

	/**
	 * @param template the template that made the lease: re-entry only ever joins a lease
	 * of the same template
	 * @param acquirer the thread that gets the lease; null for a wait that held no thread
	 */
	ManagedLease(Object template, LockProvider provider, LockHandle handle, LockSettings settings, long sentAtNanos,
			RenewalScheduler scheduler, LeaseEvents events, LeaseLossListener lossListener, boolean releaseAfterCommit,
			@Nullable Thread acquirer) {
		this(template, provider, handle, settings, scheduler, events, lossListener, releaseAfterCommit,
				handle.fencingToken(), sentAtNanos, sentAtNanos,
				sentAtNanos + LockHandle.validityNanos(settings.leaseTime()), acquirer);
	}

	/**
	 * @param token this holder's fencing token
	 * @param blockSentNanos when the store acquisition was sent
	 * @param acquiredAtNanos when this holder got the lock
	 * @param deadlineNanos the lease deadline this holder starts with
	 * @param acquirer the thread that gets the lease
	 */
	private ManagedLease(Object template, LockProvider provider, LockHandle handle, LockSettings settings,
			RenewalScheduler scheduler, LeaseEvents events, LeaseLossListener lossListener, boolean releaseAfterCommit,
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
		this.renewals = new LeaseRenewal(this, this.state, scheduler, provider, settings.leaseTime());
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
		this.renewals.start(this.settings.autoRenew(), this.deadlineNanos, this.deadlineWatch);
		if (this.handle instanceof LossReporting reporting) {
			reporting
				.onLoss((reason) -> markLost(LockObserver.LossReason.OTHER, "the store reported it lost: " + reason));
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

	@Override
	public void release() {
		LeaseEnd.release(this);
	}

	/**
	 * Marks the lease released and stops its renewal and deadline watch, waiting briefly
	 * for a renewal on the wire.
	 * @return the state it was in: {@code RELEASED} if it already was
	 */
	State stopHolding() {
		this.holders.used();
		return this.renewals.release(this.deadlineWatch);
	}

	/**
	 * {@link #stopHolding()} without waiting: null, and nothing changed, while a renewal
	 * is on the wire.
	 */
	@Nullable State stopHoldingIfQuiet() {
		this.holders.used();
		return this.renewals.releaseIfQuiet(this.deadlineWatch);
	}

	/**
	 * Deletes the lock in the store (owner-checked) as the end of its run of hand-overs,
	 * if it had one: for a lock left for the line that nobody took over.
	 * @return whether it was still held
	 */
	boolean releaseInStore() {
		return LeaseEnd.releaseInStore(this);
	}

	/**
	 * A release of this lease in the store that failed, tried again: as the release
	 * itself (owner-checked, so never anyone else's lock).
	 * @return whether the lock was still this lease's
	 * @throws LockBackendException if the store failed again
	 */
	boolean retryRelease() {
		return LeaseEnd.endInStore(this);
	}

	LeaseEvents events() {
		return this.events;
	}

	LockObserver.Holding holding() {
		return this.holding;
	}

	long deadlineNanos() {
		return this.deadlineNanos;
	}

	/** Whether its holder released it. */
	boolean released() {
		return this.state.get() == State.RELEASED;
	}

	/** Whether shutdown already deleted the key. */
	boolean revoked() {
		return this.revoked;
	}

	/** Why it is lost, as its holder is told. */
	void lostBecause(String reason) {
		this.lostReason = reason;
	}

	/** Why it is lost, unless a reason is known already. */
	void lostUnlessKnown(String reason) {
		if (this.lostReason == null) {
			this.lostReason = reason;
		}
	}

	LeaseLostException lostException() {
		return new LeaseLostException(key(), "Lease on lock '" + key() + "' (fencing token " + this.token
				+ ") was lost while held: " + this.lostReason);
	}

	/**
	 * Shutdown: the lease is declared lost and the lock deleted in the store
	 * ({@link LeaseEnd#revoke}).
	 */
	void revoke(String reason) {
		LeaseEnd.revoke(this, reason);
	}

	/** Waits briefly for a renewal on the wire, as a release does. */
	void awaitRenewalOnTheWire() {
		this.renewals.awaitQuiet();
	}

	/** Shutdown deleted the key: a release does not ask again. */
	void markRevoked() {
		this.revoked = true;
	}

	/** Whether a loss was found (not released first). */
	boolean lost() {
		return this.state.get() == State.LOST;
	}

	/**
	 * Called by the scheduler before this lease's renewal is sent.
	 * @return false if the lease is no longer held, and must not be renewed
	 */
	boolean beginRenewal() {
		return this.renewals.begin();
	}

	/**
	 * The outcome of a renewal sent at {@code sentNanos}: {@code renewed} is null when
	 * the store failed ({@code failure}).
	 */
	void renewalDone(long sentNanos, @Nullable Boolean renewed, @Nullable RuntimeException failure) {
		this.renewals.done(sentNanos, renewed, failure);
	}

	/**
	 * A renewal sent at {@code sentNanos} was confirmed: the deadline counts from then.
	 */
	void renewedAt(long sentNanos) {
		this.deadlineNanos = sentNanos + LockHandle.validityNanos(this.settings.leaseTime());
	}

	void markLost(LockObserver.LossReason kind, String reason) {
		if (this.state.get() != State.HELD) {
			return;
		}
		this.lostReason = reason;
		if (!this.state.compareAndSet(State.HELD, State.LOST)) {
			return;
		}
		this.renewals.cancel();
		this.deadlineWatch.cancel();
		LossNotice.tell(this, kind, reason, this.holders.toTell(), this.lossCallbacks, this.lossListener);
	}

	@Override
	public String toString() {
		return "Lease[key=" + key() + ", token=" + this.token + ", state=" + this.state.get() + "]";
	}

}
