package dev.distlock.support;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.DistributedLatch;
import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.handover.Handover;
import dev.distlock.support.handover.TakeOverGate;
import org.jspecify.annotations.Nullable;

/**
 * {@link LockTemplate} over any {@link LockProvider}: re-entry inside a lease's scope,
 * the waiting loop, the "too slow to count" rule, and renewal through a shared
 * {@link RenewalScheduler}.
 *
 * <p>
 * Every call ends within its wait time plus at most one store call, which the provider
 * bounds ({@link LockProvider#callTimeout()}); a store that fails or does not answer is
 * reported as {@link dev.distlock.LockBackendException}, to the caller and to the callers
 * queued behind it in this JVM, never as a busy lock.
 *
 * <p>
 * An acquire reply that arrives after the lease could already have expired (measured from
 * when the request was sent) does not count: the lock is released if it is still ours and
 * the attempt is treated as busy.
 *
 * <p>
 * A release that fails because the store cannot be reached is reported to its caller and
 * tried again in the background until it gets through or the lease would have ended, so
 * the lock is free soon after the store answers again; a caller of this template whose
 * wait runs out meanwhile is told that the key is held by that release.
 */
public final class DefaultLockTemplate implements LockTemplate, AutoCloseable {

	private final LockProvider provider;

	/** Whether the store's attempts return without waiting for the store. */
	private final boolean storeAnswersWithoutBlocking;

	private final RenewalScheduler scheduler;

	private final LockOptions defaults;

	private final LeaseLossListener lossListener;

	private final LockObserver observer;

	private final boolean releaseAfterCommit;

	/** One local line per key and side. */
	private final LocalLines lines;

	/** The leases this template's callers hold, told of their ends. */
	private final Holdings holdings;

	/** The lease this JVM holds per key: {@link Holdings#held}. */
	private final ConcurrentMap<String, ManagedLease> held;

	private final WaitLoop waitLoop;

	/** Local hand-over, or {@link Handover#off()}. */
	private final Handover<ManagedLease> handover;

	private final LockRequests requests;

	/** Releases that failed as the store could not be reached, being tried again. */
	private final PendingReleases pendingReleases;

	/** Runs the steps of waits that hold no thread ({@link #acquireAsync}). */
	private final SharedWaitDriver sharedDriver;

	/** The waits of this template's callers. */
	private final KeyWaits waits;

	/** Multi-key acquirers waiting for keys held here. */
	private final KeyWaiters keyWaiters = new KeyWaiters();

	private final MultiKeyAcquirer multiKey;

	/** Clean-up calls whose outcome no caller waits for. */
	private final Cleanup cleanup = new Cleanup();

	/**
	 * @param defaults values for everything a call leaves unset; must set every value
	 */
	public DefaultLockTemplate(LockProvider provider, RenewalScheduler scheduler, LockOptions defaults) {
		this(provider, scheduler, defaults, LeaseLossListener.NONE, true);
	}

	/**
	 * @param defaults values for everything a call leaves unset; must set every value
	 * @param lossListener told when a held lease is found lost
	 * @param releaseAfterCommit whether {@link #execute} (and the annotation) called
	 * inside an active transaction keeps the lock, renewed, until that transaction has
	 * completed
	 */
	public DefaultLockTemplate(LockProvider provider, RenewalScheduler scheduler, LockOptions defaults,
			LeaseLossListener lossListener, boolean releaseAfterCommit) {
		this(provider, scheduler, defaults, lossListener, releaseAfterCommit, LockObserver.NONE);
	}

	/**
	 * @param defaults values for everything a call leaves unset; must set every value
	 * @param lossListener told when a held lease is found lost
	 * @param releaseAfterCommit whether {@link #execute} (and the annotation) called
	 * inside an active transaction keeps the lock, renewed, until that transaction has
	 * completed
	 * @param observer told of every acquisition, hold and loss (metrics, traces)
	 */
	public DefaultLockTemplate(LockProvider provider, RenewalScheduler scheduler, LockOptions defaults,
			LeaseLossListener lossListener, boolean releaseAfterCommit, LockObserver observer) {
		this(provider, scheduler, defaults, lossListener, releaseAfterCommit, observer, HandoverSettings.DEFAULTS);
	}

	/**
	 * @param defaults values for everything a call leaves unset; must set every value
	 * @param lossListener told when a held lease is found lost
	 * @param releaseAfterCommit whether {@link #execute} (and the annotation) called
	 * inside an active transaction keeps the lock, renewed, until that transaction has
	 * completed
	 * @param observer told of every acquisition, hold and loss (metrics, traces)
	 * @param handover how a lock passes to another thread of this JVM without a store
	 * call, where the store can ({@link dev.distlock.spi.LocalHandover})
	 */
	public DefaultLockTemplate(LockProvider provider, RenewalScheduler scheduler, LockOptions defaults,
			LeaseLossListener lossListener, boolean releaseAfterCommit, LockObserver observer,
			HandoverSettings handover) {
		this(provider, scheduler, defaults, lossListener, releaseAfterCommit, observer, handover, TakeOverGate.OPEN);
	}

	/**
	 * As the public constructor, with {@code gate} passed by every thread about to take
	 * over a lock handed on in memory.
	 */
	DefaultLockTemplate(LockProvider provider, RenewalScheduler scheduler, LockOptions defaults,
			LeaseLossListener lossListener, boolean releaseAfterCommit, LockObserver observer,
			HandoverSettings handover, TakeOverGate gate) {
		LockSettings.of(defaults, defaults);
		this.provider = provider;
		this.storeAnswersWithoutBlocking = provider.callExecutor().isEmpty();
		this.scheduler = scheduler;
		this.defaults = defaults;
		this.observer = observer;
		this.lossListener = (observer == LockObserver.NONE) ? lossListener
				: new Observations.ObservedLoss(lossListener, observer);
		this.releaseAfterCommit = releaseAfterCommit;
		this.handover = Handover.of(handover, provider, this.cleanup, gate);
		this.requests = new LockRequests(provider, this.handover);
		this.lines = new LocalLines(this::discardOrphan);
		this.holdings = new Holdings(this.lines, this.keyWaiters, this.handover, this::retryRelease);
		this.held = this.holdings.held;
		this.pendingReleases = new PendingReleases(scheduler, this.cleanup, this.holdings::freed,
				defaults.retryInterval());
		this.waitLoop = new WaitLoop(provider, this.held, this::hold, this.cleanup, this.handover,
				this.pendingReleases);
		this.sharedDriver = new SharedWaitDriver(scheduler);
		this.waits = new KeyWaits(this.waitLoop, this.lines, this.requests, this.sharedDriver,
				provider.callTimeout().toNanos());
		this.multiKey = new MultiKeyAcquirer(provider, this.held, this::hold, this.cleanup, this::reentrant,
				this.keyWaiters);
	}

	@Override
	public MultiLease acquireAll(Collection<String> keys, LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		List<String> sorted = MultiKeyAcquirer.sortedKeys(keys);
		LockSettings checked = LockKeys.checkedAll(sorted, settings);
		DefaultMultiLease lease = Observations.acquireAll(this.observer, multiKey(), sorted, checked, false,
				this::reentrant);
		if (lease == null) {
			throw Holdings.notAllAcquired(sorted, settings);
		}
		return lease;
	}

	@Override
	public Optional<MultiLease> tryAcquireAll(Collection<String> keys, LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		List<String> sorted = MultiKeyAcquirer.sortedKeys(keys);
		LockSettings checked = LockKeys.checkedAll(sorted, settings);
		return Optional
			.ofNullable(Observations.acquireAll(this.observer, multiKey(), sorted, checked, true, this::reentrant));
	}

	/**
	 * Takes every one of {@code keys} for a caller that does not wait on a thread: all
	 * keys or none, as {@link #acquireAll}, waiting as {@link #acquireAsync} does. Keys a
	 * scope of the calling thread holds are re-entered. The observer is not told.
	 * @return completes with the lease of all keys, or empty when the wait time ran out;
	 * fails with the exception {@code acquireAll} would throw. Cancelling it gives up the
	 * wait; locks taken meanwhile are released.
	 */
	public CompletableFuture<Optional<MultiLease>> acquireAllAsync(Collection<String> keys, LockOptions options) {
		List<String> sorted = MultiKeyAcquirer.sortedKeys(keys);
		return waitAllAsync(sorted, LockSettings.of(options, this.defaults), this::reentrant);
	}

	@Override
	public <T> T executeAll(Collection<String> keys, LockOptions options, Supplier<T> action) {
		return LeasedCall.call(acquireAll(keys, options), action::get);
	}

	@Override
	public DistributedLatch latch(String key, int count, java.time.Duration expiry) {
		LockKeys.check(key);
		LatchStore latches = this.provider.latches()
			.orElseThrow(() -> new UnsupportedOperationException(Capabilities.noLatches(this.provider)));
		return DefaultLatch.join(latches, key, count, expiry, this.defaults.retryInterval());
	}

	@Override
	public SegmentedLock segmented(String key, int segments) {
		LockKeys.check(key);
		multiKey();
		return new DefaultSegmentedLock(this, key, segments, this.held::containsKey, this.defaults);
	}

	private MultiKeyAcquirer multiKey() {
		Capabilities.refusal(this.provider, LockKind.MULTI).ifPresent((reason) -> {
			throw new UnsupportedOperationException(reason);
		});
		return this.multiKey;
	}

	@Override
	public <T> T execute(String key, LockOptions options, Supplier<T> action) {
		return LeasedCall.call(acquire(key, options), action::get);
	}

	@Override
	public Lease acquire(String key, LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		return observed(key, settings, false);
	}

	@Override
	public Optional<Lease> tryAcquire(String key, LockOptions options) {
		return Optional.ofNullable(observed(key, LockSettings.of(options, this.defaults), true));
	}

	/**
	 * Takes {@code key} for a caller that does not wait on a thread: the machinery under
	 * {@link #acquire(String, LockOptions)}, with every kind of hold and every guarantee
	 * of it, but nothing parks while the caller waits. Its place in this JVM's line, its
	 * attempts, pauses and take-overs are steps run on a few shared worker threads and
	 * timed by the renewal scheduler. The first attempt runs on the calling thread, so an
	 * uncontended acquisition on a store that answers at once completes before this
	 * returns.
	 *
	 * <p>
	 * Re-entry is as for the blocking calls: a scope of the calling thread re-enters its
	 * lease. The lease belongs to no thread: a loss is told to the threads running a
	 * scope of it, never to the thread that happened to complete the future.
	 * @return completes with the lease, or empty when the wait time ran out; fails with
	 * the exception {@code acquire} would throw. Cancelling it gives up the wait (a place
	 * kept in the store is withdrawn); a lock taken meanwhile is released.
	 */
	public CompletableFuture<Optional<Lease>> acquireAsync(String key, LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		ManagedLease scoped = scoped(key, settings);
		if (scoped != null) {
			return CompletableFuture.completedFuture(Optional.of(scoped.enter()));
		}
		return waitAsync(key, settings, false, false);
	}

	/**
	 * The wait of {@link #acquireAsync} once re-entry is ruled out and the key and kind
	 * are checked ({@link #check}).
	 * @param withoutWaiting whether the calling thread must not wait even for a lock (an
	 * event loop): it then takes the first step only if this JVM's line for the key is
	 * free at once, and only as far as the store call
	 * @param grantWhereAnswered whether the answer may complete on the thread the store
	 * answered on, for a caller that moves on to a thread of its own anyway
	 * ({@link WaitDriver#grantsWhereAnswered()})
	 */
	CompletableFuture<Optional<Lease>> waitAsync(String key, LockSettings settings, boolean withoutWaiting,
			boolean grantWhereAnswered) {
		return this.waits.shared(key, settings, this.observer.acquiring(key, settings.name(), settings.fair()),
				withoutWaiting, grantWhereAnswered);
	}

	/**
	 * Whether the store's attempts return without waiting for the store, so that a caller
	 * that must not block may make one.
	 */
	boolean storeAnswersWithoutBlocking() {
		return this.storeAnswersWithoutBlocking;
	}

	/**
	 * {@link #acquireAllAsync} for keys (sorted) re-entered as {@code reentrant} says.
	 */
	CompletableFuture<Optional<MultiLease>> waitAllAsync(List<String> sorted, LockSettings settings,
			Function<String, @Nullable ManagedLease> reentrant) {
		return this.waits.sharedAll(multiKey(), sorted, LockKeys.checkedAll(sorted, settings), reentrant);
	}

	/** This template's settings for {@code options}. */
	LockSettings settings(LockOptions options) {
		return LockSettings.of(options, this.defaults);
	}

	/** Runs a step that may call the store on one of the template's wait workers. */
	void offload(Runnable step) {
		this.sharedDriver.execute(step);
	}

	/** Checks the key and that the store offers the kind, as every acquisition does. */
	void check(String key, LockSettings settings) {
		LockKeys.check(key);
		Capabilities.check(this.provider, settings.kind(), key);
	}

	/**
	 * An acquisition as the observer sees it: a re-entry is not one (it costs nothing);
	 * {@code tryOnly} tells a skip (empty result) from a timeout (exception).
	 */
	private @Nullable Lease observed(String key, LockSettings settings, boolean tryOnly) {
		ManagedLease scoped = scoped(key, settings);
		if (scoped != null) {
			return scoped.enter();
		}
		LockObserver.Acquisition acquisition = this.observer.acquiring(key, settings.name(), settings.fair());
		ManagedLease lease;
		try {
			lease = this.waits.blocking(key, settings);
			if (lease == null && !tryOnly) {
				throw notAcquired(key, settings);
			}
		}
		catch (RuntimeException ex) {
			Observations.ended(acquisition, null, ex, tryOnly);
			throw ex;
		}
		return Observations.ended(acquisition, lease, null, tryOnly);
	}

	/**
	 * Checks the key and the kind; the lease of {@code key} a scope of the current thread
	 * re-enters, if any.
	 */
	private @Nullable ManagedLease scoped(String key, LockSettings settings) {
		LockKeys.check(key);
		// A kind the store lacks fails at the call, naming the store and the kind (the
		// advisor checks annotated methods at startup); a fair lock only orders the
		// store's queue, so a held scope re-enters it as it would a plain lock.
		boolean fair = settings.kind() == LockKind.FAIR;
		if (!fair) {
			Capabilities.check(this.provider, settings.kind(), key);
		}
		ManagedLease scoped = Reentry.scoped(this, key, settings);
		if (scoped == null && fair) {
			Capabilities.check(this.provider, LockKind.FAIR, key);
		}
		return scoped;
	}

	/**
	 * The lease of {@code key} a multi-key acquisition of the current thread re-enters:
	 * as {@link Reentry#scoped} for a plain (write) lock.
	 */
	private @Nullable ManagedLease reentrant(String key) {
		return Reentry.scoped(this, key, LockSettings.of(LockOptions.defaults(), this.defaults));
	}

	/**
	 * What {@code acquire} throws when the wait time of {@code options} ran out, for the
	 * asynchronous template.
	 */
	RuntimeException notAcquired(String key, LockOptions options) {
		return notAcquired(key, LockSettings.of(options, this.defaults));
	}

	/**
	 * The wait ran out while another thread of this JVM holds the key. When that lease
	 * came from {@code acquire} on this very thread, say so: such a lease is not
	 * re-entrant outside its scope, and the caller may have expected it to be.
	 */
	private RuntimeException notAcquired(String key, LockSettings settings) {
		return this.holdings.notAcquired(key, settings, this.pendingReleases.pendingFor(key));
	}

	/**
	 * Whether this template's store offers {@code capability}, a capability interface of
	 * the SPI.
	 */
	public boolean supports(Class<? extends LockProvider> capability) {
		return capability.isInstance(this.provider);
	}

	/** The name of this template's store, as users configure it. */
	public String storeName() {
		return this.provider.storeName();
	}

	/**
	 * Keys with local threads acquiring or waiting: 0 when nobody waits (a finished wait
	 * leaves none).
	 */
	public int queuedKeys() {
		return this.lines.size();
	}

	/** Ends a lock left for a line that emptied, which nobody takes over. */
	private void discardOrphan(ManagedLease orphan) {
		this.waitLoop.discard(orphan, null);
	}

	/**
	 * A release failed as the store could not be reached: tried again in the background.
	 */
	private void retryRelease(ManagedLease lease, LockBackendException failure) {
		this.pendingReleases.add(lease, failure);
	}

	private ManagedLease hold(LockHandle handle, LockSettings settings, long sentAtNanos, @Nullable Thread acquirer) {
		ManagedLease lease = new ManagedLease(this, this.provider, handle, settings, sentAtNanos, this.scheduler,
				this.holdings, this.lossListener, this.releaseAfterCommit, acquirer);
		this.holdings.add(lease);
		lease.start();
		return lease;
	}

	/**
	 * Locks passed from one thread of this JVM to another in memory, without a store
	 * call, since the template was made ({@link HandoverSettings}).
	 */
	public long localHandovers() {
		return this.handover.handovers();
	}

	/**
	 * Releases that failed because the store could not be reached and are being tried
	 * again in the background, until one gets through or its lease would have ended: 0
	 * once the store answers again.
	 */
	public int pendingReleases() {
		return this.pendingReleases.size();
	}

	/** Locks that callers of this template hold now: 0 once every lease is released. */
	public int heldLocks() {
		return this.holdings.count();
	}

	/**
	 * What this template's callers hold now, for operators: one entry per lock, in no
	 * particular order. A snapshot; the leases go on changing.
	 */
	public List<HeldLock> heldLockDetails() {
		return this.holdings.details();
	}

	/**
	 * Threads of this JVM acquiring or waiting, per key: the one at the gate talking to
	 * the store and those lined up behind it. A snapshot.
	 */
	public Map<String, Integer> waitingThreads() {
		return this.lines.waiting();
	}

	/**
	 * One lock held by a caller of a template.
	 *
	 * @param key the key as the caller gave it
	 * @param name the lock's name ({@link LockOptions#name()}), or null
	 * @param fencingToken the lease's fencing token
	 * @param holderThreads the threads running a scope of it (or the thread that acquired
	 * it, while no other has used it)
	 * @param heldFor since the acquire was sent
	 * @param remainingLease until this JVM counts the lease as lost unless a renewal is
	 * confirmed
	 * @param leaseTime the lease time it was taken with
	 */
	public record HeldLock(String key, @Nullable String name, long fencingToken, List<String> holderThreads,
			Duration heldFor, Duration remainingLease, Duration leaseTime) {
	}

	/**
	 * Ends every lease this template's callers still hold, at shutdown, so that a JVM
	 * that stops while holding locks does not leave them to expire. A holder may still be
	 * running (work that the web server's graceful shutdown does not wait for: an
	 * executor, a {@code CompletableFuture}), so each lease still held is first declared
	 * lost, exactly as a lease lost any other way: {@code isHeld()} turns false, a
	 * {@link dev.distlock.LockLostEvent} is published, {@code on-lease-lost} applies, and
	 * the holder's own release throws {@link dev.distlock.LeaseLostException}. Then the
	 * lock is deleted in the store.
	 */
	@Override
	public void close() {
		this.holdings.close();
		this.pendingReleases.close();
		this.sharedDriver.close();
		this.cleanup.shutdown();
	}

}
