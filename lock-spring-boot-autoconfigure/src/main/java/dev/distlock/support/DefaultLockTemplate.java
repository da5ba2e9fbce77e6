package dev.distlock.support;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * {@link LockTemplate} over any {@link LockProvider}: reentrancy per thread, the waiting
 * loop, the "too slow to count" rule, and renewal through a shared
 * {@link RenewalScheduler}.
 *
 * <p>
 * An acquire reply that arrives after the lease could already have expired (measured from
 * when the request was sent) does not count: the lock is released if it is still ours and
 * the attempt is treated as busy.
 */
public final class DefaultLockTemplate implements LockTemplate, AutoCloseable {

	private static final Log logger = LogFactory.getLog(DefaultLockTemplate.class);

	private static final Duration MIN_QUEUE_TIMEOUT = Duration.ofSeconds(1);

	/** Longer keys are rejected: a key names a resource, and Redis keys cost memory. */
	static final int MAX_KEY_LENGTH = 1024;

	private final LockProvider provider;

	private final RenewalScheduler scheduler;

	private final LockOptions defaults;

	private final LeaseLossListener lossListener;

	private final boolean releaseAfterCommit;

	/**
	 * The lease this JVM holds per key, for reentrancy; at most one per key by mutual
	 * exclusion.
	 */
	private final ConcurrentMap<String, ManagedLease> held = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, KeyQueue> queues = new ConcurrentHashMap<>();

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
		LockSettings.of(defaults, defaults);
		this.provider = provider;
		this.scheduler = scheduler;
		this.defaults = defaults;
		this.lossListener = lossListener;
		this.releaseAfterCommit = releaseAfterCommit;
	}

	@Override
	public <T> T execute(String key, LockOptions options, Supplier<T> action) {
		return LeasedCall.call(acquire(key, options), action::get);
	}

	@Override
	public Lease acquire(String key, LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		Lease lease = acquire(key, settings);
		if (lease == null) {
			throw new LockAcquisitionException(key, settings.waitTime());
		}
		return lease;
	}

	@Override
	public Optional<Lease> tryAcquire(String key, LockOptions options) {
		return Optional.ofNullable(acquire(key, LockSettings.of(options, this.defaults)));
	}

	private @Nullable Lease acquire(String key, LockSettings settings) {
		checkKey(key);
		ManagedLease current = this.held.get(key);
		if (current != null && current.owner() == Thread.currentThread()) {
			return current.enter();
		}
		long start = System.nanoTime();
		long deadline = start + settings.waitTime().toNanos();
		KeyQueue queue = join(key);
		try {
			if (!enter(queue, key, settings, deadline)) {
				return null;
			}
			try {
				return attempt(key, settings, queue, deadline);
			}
			finally {
				queue.gate.release();
			}
		}
		finally {
			leave(key, queue);
		}
	}

	/**
	 * Threads of this JVM that want the same key line up here, in arrival order, so that
	 * only one of them at a time talks to the store and waits for a release signal. The
	 * gate is left as soon as the lock is taken (or given up), never held with the lock,
	 * so a lock that expires in the store never blocks this JVM.
	 */
	private boolean enter(KeyQueue queue, String key, LockSettings settings, long deadline) {
		if (settings.waitTime().isZero()) {
			return queue.gate.tryAcquire();
		}
		try {
			return queue.gate.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw interrupted(key, settings, ex);
		}
	}

	private @Nullable Lease attempt(String key, LockSettings settings, KeyQueue queue, long deadline) {
		long leaseNanos = settings.leaseTime().toNanos();
		boolean waiting = !settings.waitTime().isZero();
		ReleaseSignals signals = this.provider.releaseSignals();
		boolean signalled = waiting && signals != ReleaseSignals.NONE;
		Backoff backoff = new Backoff(settings.retryInterval().toNanos());
		queue.waiter = Thread.currentThread();
		// Subscribed before the first attempt, so that no release after it goes unheard.
		ReleaseSignals.Subscription subscription = signalled ? signals.subscribe(key, queue::signal) : null;
		boolean fair = settings.fair();
		String waiterId = fair ? UUID.randomUUID().toString() : "";
		boolean queued = fair;
		try {
			while (true) {
				if (Thread.currentThread().isInterrupted()) {
					throw interrupted(key, settings, null);
				}
				queue.signalled = false;
				ManagedLease local = fair ? null : this.held.get(key);
				if (local != null && local.isHeld()) {
					// Held by another thread of this JVM: its release signals here
					// directly,
					// so asking Redis would only cost a round trip. (A fair waiter must
					// ask, to keep its place in the queue.)
					long remainingWait = deadline - System.nanoTime();
					if (remainingWait <= 0) {
						return null;
					}
					park(queue, Math.min(settings.retryInterval().toNanos(), remainingWait), key, settings);
					continue;
				}
				long sent = System.nanoTime();
				LockAttempt attempt;
				try {
					attempt = fair
							? this.provider.tryLockFair(key, settings.leaseTime(), waiterId, queueTimeout(settings))
							: this.provider.tryLock(key, settings.leaseTime(), waiting);
				}
				catch (LockBackendException ex) {
					if (Thread.currentThread().isInterrupted()) {
						throw interrupted(key, settings, ex);
					}
					throw ex;
				}
				if (attempt instanceof LockAttempt.Acquired acquired) {
					if (System.nanoTime() - sent < leaseNanos) {
						queued = false;
						return hold(acquired.handle(), settings, sent);
					}
					discardLate(acquired.handle());
				}
				long remainingWait = deadline - System.nanoTime();
				if (remainingWait <= 0) {
					return null;
				}
				// With signals, the retry interval is only the fallback for a lost
				// signal.
				// Until the subscription is up, and without signals, waiters poll with
				// backoff.
				long pause = Math.min((signalled && signals.isListening(key)) ? settings.retryInterval().toNanos()
						: backoff.nextPauseNanos(), remainingWait);
				if (attempt instanceof LockAttempt.Busy busy && !busy.remaining().isZero()) {
					pause = Math.min(pause, busy.remaining().toNanos());
				}
				park(queue, pause, key, settings);
			}
		}
		finally {
			queue.waiter = null;
			if (subscription != null) {
				subscription.close();
			}
			if (queued) {
				leaveQueue(key, waiterId);
			}
		}
	}

	/**
	 * A fair waiter attempts at least once per retry interval, each attempt keeping its
	 * place for this long; a waiter that dies is out of the queue after it.
	 */
	private static Duration queueTimeout(LockSettings settings) {
		Duration threeRetries = settings.retryInterval().multipliedBy(3);
		return (threeRetries.compareTo(MIN_QUEUE_TIMEOUT) < 0) ? MIN_QUEUE_TIMEOUT : threeRetries;
	}

	/** Gives up a place in a fair queue, so the next waiter need not wait it out. */
	private void leaveQueue(String key, String waiterId) {
		boolean interrupted = Thread.interrupted();
		try {
			this.provider.leaveQueue(key, waiterId);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not leave the queue of lock '" + key + "'; the place expires by itself", ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Sleeps until signalled or {@code pauseNanos} have passed. */
	private static void park(KeyQueue queue, long pauseNanos, String key, LockSettings settings) {
		long until = System.nanoTime() + pauseNanos;
		while (!queue.signalled) {
			long left = until - System.nanoTime();
			if (left <= 0) {
				return;
			}
			LockSupport.parkNanos(queue, left);
			if (Thread.currentThread().isInterrupted()) {
				throw interrupted(key, settings, null);
			}
		}
	}

	private KeyQueue join(String key) {
		return this.queues.compute(key, (k, queue) -> {
			KeyQueue joined = (queue != null) ? queue : new KeyQueue();
			joined.users++;
			return joined;
		});
	}

	private void leave(String key, KeyQueue queue) {
		this.queues.computeIfPresent(key, (k, current) -> (--current.users == 0) ? null : current);
	}

	/** A lock of this JVM was released: the local waiter for it retries at once. */
	private void released(String key) {
		KeyQueue queue = this.queues.get(key);
		if (queue != null) {
			queue.signal();
		}
	}

	/**
	 * Keys with local threads acquiring or waiting: 0 when nobody waits (a finished wait
	 * leaves none).
	 */
	public int queuedKeys() {
		return this.queues.size();
	}

	private ManagedLease hold(LockHandle handle, LockSettings settings, long sentAtNanos) {
		ManagedLease lease = new ManagedLease(this.provider, handle, settings, sentAtNanos, this.scheduler,
				(ended) -> this.held.remove(ended.key(), ended), () -> released(handle.key()), this.lossListener,
				this.releaseAfterCommit);
		this.held.put(handle.key(), lease);
		lease.start();
		return lease;
	}

	/** The local line for one key; {@code users} is guarded by the map's compute. */
	private static final class KeyQueue {

		final Semaphore gate = new Semaphore(1, true);

		int users;

		volatile boolean signalled;

		volatile @Nullable Thread waiter;

		void signal() {
			this.signalled = true;
			Thread thread = this.waiter;
			if (thread != null) {
				LockSupport.unpark(thread);
			}
		}

	}

	private static void discardLate(LockHandle handle) {
		logger.warn("Acquire reply for lock '" + handle.key() + "' arrived after its lease could have expired;"
				+ " not counting it as acquired");
		try {
			handle.release();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not clean up late lock '" + handle.key() + "'", ex);
		}
	}

	private static void checkKey(@Nullable String key) {
		if (key == null || key.isBlank()) {
			throw new IllegalArgumentException("Lock key must not be null or blank but was '" + key + "'");
		}
		if (key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException(
					"Lock key is " + key.length() + " characters long, more than " + MAX_KEY_LENGTH + " (it starts '"
							+ key.substring(0, 40) + "…'): use an identifier, not a" + " payload, as the key");
		}
	}

	/** Locks that callers of this template hold now: 0 once every lease is released. */
	public int heldLocks() {
		return this.held.size();
	}

	/**
	 * Releases every lock this template's callers still hold, and stops their renewal:
	 * run when the application context closes, so a JVM that shuts down while holding
	 * locks does not leave them to expire.
	 */
	@Override
	public void close() {
		for (ManagedLease lease : this.held.values()) {
			try {
				lease.release();
				logger.info("Released lock '" + lease.key() + "' at shutdown; it was still held by thread '"
						+ lease.owner().getName() + "'");
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release lock '" + lease.key() + "' at shutdown; it expires after its lease", ex);
			}
		}
	}

	private static LockAcquisitionException interrupted(String key, LockSettings settings, @Nullable Exception cause) {
		return new LockAcquisitionException(key, settings.waitTime(),
				"Interrupted while waiting for lock '" + key + "'", cause);
	}

}
