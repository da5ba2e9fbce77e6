package dev.distlock.inmemory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import dev.distlock.DistributedLatch;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.spi.TokenBlock;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Locks held in this JVM's memory, for tests and single-instance applications. Every
 * {@code DefaultLockTemplate} built on one instance shares its locks, as JVMs share a
 * Redis server.
 *
 * <p>
 * It keeps the contract of a networked store: every attempt is a fresh owner, so a handle
 * whose lease ran out can neither renew nor delete the lock of the next owner; a lock not
 * renewed expires after its lease on the monotonic clock; fencing tokens only rise. It
 * signals releases to waiters ({@link ReleaseSignalling}) and offers every
 * {@link LockKind}: it queues fair waiters. It takes multi-key locks (the sorted keys one
 * by one, each atomically, and those taken given back at once when one is busy, so a
 * plain attempt may find a key busy for that instant, as on a Redis cluster whose keys
 * span slots) keeps countdown latches ({@link LatchStore}) and reserves blocks of fencing
 * tokens for local hand-over ({@link LocalHandover}; each template on one instance counts
 * as its own JVM, and a waiter marks the key as another JVM's would in Redis). It has
 * read-write locks (readers share a key, a plain lock is the writer's side, a waiting
 * writer's intent holds new readers back) and semaphores (a key space of their own, each
 * permit a lease with its own token, freed permits signalled to every waiter). Nothing
 * here waits: every call returns at once, whatever other threads hold.
 *
 * <p>
 * An expired lock is found out when its key is next used (no timer thread): its waiters
 * need no signal for it, since they sleep no longer than the holder's remaining lease. A
 * key that is released, expired or given up, with nobody waiting, leaves nothing behind:
 * released keys go at once, expired ones at the latest when the store has doubled in size
 * since it last swept.
 */
public final class InMemoryLockProvider implements ReleaseSignalling, LocalHandover {

	private static final Set<LockKind> KINDS = Collections.unmodifiableSet(EnumSet.allOf(LockKind.class));

	private static final Log logger = LogFactory.getLog(InMemoryLockProvider.class);

	private static final int MIN_SWEEP_SIZE = 256;

	/**
	 * One entry per key in use. Every read and write of an entry happens inside a
	 * {@code compute} on its key, which makes each operation atomic per key and lets an
	 * entry be removed exactly when it becomes unused, without a lock of our own.
	 */
	private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

	/** Semaphores, a key space of their own, kept as {@link #entries} are. */
	private final ConcurrentHashMap<String, Semaphore> semaphores = new ConcurrentHashMap<>();

	/** One counter for every key: tokens then rise per key as well. */
	private final AtomicLong fence = new AtomicLong();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private volatile int sweepAt = MIN_SWEEP_SIZE;

	private final InMemoryLatches latches = new InMemoryLatches();

	private final ReleaseSignals signals = new Signals<>(this.entries, Entry::new);

	private final ReleaseSignals permitSignals = new Signals<>(this.semaphores, Semaphore::new);

	@Override
	public ReleaseSignals releaseSignals() {
		return this.signals;
	}

	/** Every freed permit is signalled to every waiter of its semaphore. */
	@Override
	public ReleaseSignals permitSignals() {
		return this.permitSignals;
	}

	/** Subscriptions to the slots of one key space. */
	private final class Signals<S extends Slot> implements ReleaseSignals {

		private final ConcurrentHashMap<String, S> slots;

		private final Supplier<S> factory;

		Signals(ConcurrentHashMap<String, S> slots, Supplier<S> factory) {
			this.slots = slots;
			this.factory = factory;
		}

		@Override
		public Subscription subscribe(String key, Runnable onRelease) {
			update(this.slots, this.factory, key, true, (slot, now) -> slot.subscribers.add(onRelease));
			AtomicBoolean closed = new AtomicBoolean();
			return () -> {
				if (closed.compareAndSet(false, true)) {
					update(this.slots, this.factory, key, false, (slot, now) -> slot.subscribers.remove(onRelease));
				}
			};
		}

		/** Signals are method calls inside this JVM: none is ever lost. */
		@Override
		public boolean isListening() {
			return true;
		}

	}

	/** Every kind: plain, fair, read and multi-key locks, and semaphores. */
	@Override
	public Set<LockKind> kinds() {
		return KINDS;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Answers on the calling thread, at once.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> take(request));
	}

	private LockAttempt take(LockRequest request) {
		String key = request.key();
		Duration leaseTime = request.leaseTime();
		String waiterId = request.waiterId();
		return switch (request.kind()) {
			case EXCLUSIVE -> (waiterId == null) ? tryLockBlock(key, leaseTime, request.waiting(), request.tokens())
					: (request.tokens() > 1 && !request.intentRecorded())
							? tryLockBlock(key, leaseTime, request.tokens(), waiterId, request.queueTimeout())
							: tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout(), request.tokens());
			case FAIR -> tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> tryLockShared(key, leaseTime);
			case PERMITS -> tryAcquirePermit(key, request.permits(), leaseTime);
			case MULTI -> tryLockAll(request.keys(), leaseTime);
		};
	}

	@Override
	public void withdraw(LockRequest request) {
		String waiterId = Objects.requireNonNull(request.waiterId());
		if (request.kind() == LockKind.FAIR) {
			leaveQueue(request.key(), waiterId);
		}
		else {
			withdrawIntent(request.key(), waiterId);
		}
	}

	/**
	 * A busy attempt with {@code waiting} marks the key, and the holder's release reports
	 * the mark ({@link TokenBlock#releasedToWaiters()}). Every release is signalled to
	 * every subscriber of its key, whether marked or not.
	 */
	private LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens) {
		return tryLockBlock(key, leaseTime, waiting, tokens, null, 0);
	}

	/**
	 * A waiting writer's first attempt: busy behind readers, the intent is recorded as
	 * {@link #tryLockExclusive} records it.
	 */
	private LockAttempt tryLockBlock(String key, Duration leaseTime, int tokens, String waiterId,
			Duration intentTimeout) {
		return tryLockBlock(key, leaseTime, true, tokens, waiterId, positive(intentTimeout));
	}

	private LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens,
			@Nullable String writerId, long keepIntent) {
		long lease = positive(leaseTime);
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		sweepIfGrown();
		return update(key, true, (entry, now) -> {
			if (entry.free()) {
				if (writerId != null) {
					entry.intents.remove(writerId);
				}
				return entry.acquire(this, key, lease, now, null, tokens);
			}
			entry.waited |= waiting;
			if (writerId != null && entry.holder == null) {
				// Readers hold it: hold new ones back.
				entry.intents.put(writerId, now + keepIntent);
			}
			return entry.busy(now);
		});
	}

	/**
	 * Granted while no writer holds the key and no writer's intent is recorded.
	 */
	private LockAttempt tryLockShared(String key, Duration leaseTime) {
		long lease = positive(leaseTime);
		sweepIfGrown();
		return update(key, true, (entry, now) -> {
			if (entry.holder != null || !entry.intents.isEmpty()) {
				return entry.busy(now);
			}
			ReadHold hold = new ReadHold(this, key, this.fence.incrementAndGet());
			entry.readers.put(hold, now + lease);
			return new LockAttempt.Acquired(hold);
		});
	}

	/**
	 * A waiting writer's attempt: the same waiter asking again while it holds the lock
	 * gets that acquisition back; behind readers, its intent is recorded.
	 */
	private LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout,
			int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		long lease = positive(leaseTime);
		long keepIntent = positive(intentTimeout);
		sweepIfGrown();
		return update(key, true, (entry, now) -> {
			Holder holder = entry.holder;
			if (holder != null && waiterId.equals(holder.waiterId)) {
				return new LockAttempt.Acquired(holder);
			}
			if (entry.free()) {
				entry.intents.remove(waiterId);
				return entry.acquire(this, key, lease, now, waiterId, tokens);
			}
			if (holder == null) {
				// Readers hold it: hold new ones back. (Another writer's release is
				// signalled anyway.)
				entry.intents.put(waiterId, now + keepIntent);
			}
			return entry.busy(now);
		});
	}

	private void withdrawIntent(String key, String waiterId) {
		update(key, false, (entry, now) -> {
			if (entry.intents.remove(waiterId) != null && entry.intents.isEmpty() && entry.holder == null) {
				entry.freed = true;
			}
			return null;
		});
	}

	/**
	 * The count is kept while any permit is held, and taken from the next attempt once
	 * none is.
	 */
	private LockAttempt tryAcquirePermit(String key, int permits, Duration leaseTime) {
		if (permits <= 0) {
			throw new IllegalArgumentException("permits must be positive but was " + permits);
		}
		long lease = positive(leaseTime);
		sweepIfGrown();
		return update(this.semaphores, Semaphore::new, key, true, (semaphore, now) -> {
			if (semaphore.holders.isEmpty()) {
				semaphore.permits = permits;
			}
			else if (semaphore.permits != permits) {
				throw new PermitCountMismatchException(key, semaphore.permits, permits);
			}
			if (semaphore.holders.size() >= permits) {
				long first = semaphore.holders.values()
					.stream()
					.mapToLong((deadline) -> deadline - now)
					.min()
					.orElse(1);
				return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, first)));
			}
			Permit permit = new Permit(this, key, this.fence.incrementAndGet());
			semaphore.holders.put(permit, now + lease);
			return new LockAttempt.Acquired(permit);
		});
	}

	/**
	 * The same waiter asking again while the lock is held by the acquisition it made gets
	 * that acquisition back, as a re-sent command would from Redis. A place in the queue
	 * that was not refreshed in time is dropped by the next call on the key.
	 */
	private LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		long lease = positive(leaseTime);
		long keepPlace = positive(queueTimeout);
		sweepIfGrown();
		return update(key, true, (entry, now) -> {
			Holder holder = entry.holder;
			if (holder != null && waiterId.equals(holder.waiterId)) {
				return new LockAttempt.Acquired(holder);
			}
			String first = entry.queue.isEmpty() ? waiterId : entry.queue.keySet().iterator().next();
			if (entry.free() && first.equals(waiterId)) {
				entry.queue.remove(waiterId);
				return entry.acquire(this, key, lease, now, waiterId, 1);
			}
			// Re-putting a present key keeps its place: the queue is in arrival order.
			entry.queue.put(waiterId, now + keepPlace);
			if (!entry.free()) {
				return entry.busy(now);
			}
			// Free, but another waiter's turn: look again when its place would lapse.
			return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, entry.queue.get(first) - now)));
		});
	}

	/**
	 * Each key is taken as a plain lock is, with a token from the same counter.
	 */
	private LockAttempt tryLockAll(List<String> keys, Duration leaseTime) {
		long lease = positive(leaseTime);
		sweepIfGrown();
		List<LockHandle> taken = new ArrayList<>(keys.size());
		for (String key : keys) {
			LockAttempt attempt = update(key, true,
					(entry, now) -> entry.free() ? entry.acquire(this, key, lease, now, null, 1) : entry.busy(now));
			if (attempt instanceof LockAttempt.Acquired acquired) {
				taken.add(acquired.handle());
			}
			else {
				taken.forEach(LockHandle::release);
				return new LockAttempt.Busy(((LockAttempt.Busy) attempt).remaining(), key);
			}
		}
		return new LockAttempt.AcquiredAll(taken);
	}

	@Override
	public Optional<LatchStore> latches() {
		return Optional.of(this.latches);
	}

	private void leaveQueue(String key, String waiterId) {
		update(key, false, (entry, now) -> {
			// The next waiter may be the one whose turn it is now.
			if (entry.queue.remove(waiterId) != null && entry.holder == null && !entry.queue.isEmpty()) {
				entry.freed = true;
			}
			return null;
		});
	}

	/**
	 * Ends the current lease on {@code key} at once, as if it had run out: for tests of
	 * what a holder does when its lease is lost. Waiters are signalled.
	 * @return whether a lease was held
	 */
	public boolean expire(String key) {
		return Boolean.TRUE.equals(update(key, false, (entry, now) -> {
			if (entry.holder == null && entry.readers.isEmpty()) {
				return false;
			}
			entry.holder = null;
			entry.readers.clear();
			entry.freed = true;
			return true;
		}));
	}

	/**
	 * Ends every held permit of the semaphore {@code key} at once, as if their holders
	 * had died: for tests of what a holder does when its permit is lost. Waiters are
	 * signalled.
	 * @return how many permits were held
	 */
	public int expirePermits(String key) {
		Integer ended = update(this.semaphores, Semaphore::new, key, false, (semaphore, now) -> {
			int held = semaphore.holders.size();
			semaphore.holders.clear();
			semaphore.freed = held > 0;
			return held;
		});
		return (ended != null) ? ended : 0;
	}

	/** Permits of the semaphore {@code key} held now (expired ones not counted). */
	public int heldPermits(String key) {
		Integer held = update(this.semaphores, Semaphore::new, key, false,
				(semaphore, now) -> semaphore.holders.size());
		return (held != null) ? held : 0;
	}

	/** Read holds on {@code key} now (expired ones not counted). */
	public int readers(String key) {
		Integer readers = update(key, false, (entry, now) -> entry.readers.size());
		return (readers != null) ? readers : 0;
	}

	/** Fair waiters queued for {@code key} whose place has not lapsed. */
	public int queueLength(String key) {
		Integer length = update(key, false, (entry, now) -> entry.queue.size());
		return (length != null) ? length : 0;
	}

	/**
	 * Keys with a holder, a queued waiter or a subscriber: 0 once every lock is released
	 * and nobody waits (expired locks may count until the store next sweeps).
	 */
	public int storedKeys() {
		return this.entries.size() + this.semaphores.size();
	}

	/** Calls never wait on I/O; at most, briefly, for another call on the same key. */
	@Override
	public Duration callTimeout() {
		return Duration.ofSeconds(1);
	}

	@Override
	public String storeName() {
		return "in-memory";
	}

	/**
	 * Runs {@code action} on the entry of {@code key} atomically, after dropping an
	 * expired holder and lapsed queue places; removes the entry if it is then unused, and
	 * signals the key's subscribers, outside the map's lock, if the lock was freed.
	 * @param create whether to create a missing entry; if not, returns null for one
	 */
	private <R> @Nullable R update(String key, boolean create, BiFunction<Entry, Long, R> action) {
		return update(this.entries, Entry::new, key, create, action);
	}

	private <S extends Slot, R> @Nullable R update(ConcurrentHashMap<String, S> slots, Supplier<S> factory, String key,
			boolean create, BiFunction<S, Long, R> action) {
		List<Object> outcome = new ArrayList<>(2);
		slots.compute(key, (k, current) -> {
			S entry = (current != null) ? current : create ? factory.get() : null;
			if (entry == null) {
				return null;
			}
			long now = System.nanoTime();
			entry.prune(now);
			outcome.add(action.apply(entry, now));
			if (entry.freed && !entry.subscribers.isEmpty()) {
				outcome.add(List.copyOf(entry.subscribers));
			}
			entry.freed = false;
			return entry.unused() ? null : entry;
		});
		for (Object subscriber : (outcome.size() > 1) ? (List<?>) outcome.get(1) : List.of()) {
			try {
				((Runnable) subscriber).run();
			}
			catch (RuntimeException ex) {
				// A waiter's callback must not fail a release that happened.
				logger.warn("Release signal subscriber failed", ex);
			}
		}
		@SuppressWarnings("unchecked")
		R result = outcome.isEmpty() ? null : (R) outcome.get(0);
		return result;
	}

	/**
	 * Drops expired entries once the map has doubled since the last sweep, so that keys
	 * locked once and never touched again cost amortised constant time and bounded
	 * memory, without a timer thread.
	 */
	private void sweepIfGrown() {
		if (storedKeys() < this.sweepAt || !this.sweeping.compareAndSet(false, true)) {
			return;
		}
		try {
			for (String key : this.entries.keySet()) {
				update(key, false, (entry, now) -> null);
			}
			for (String key : this.semaphores.keySet()) {
				update(this.semaphores, Semaphore::new, key, false, (semaphore, now) -> null);
			}
			this.sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * storedKeys());
		}
		finally {
			this.sweeping.set(false);
		}
	}

	private static long positive(Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("Lease and queue times must be positive but was " + duration);
		}
		return duration.toNanos();
	}

	/**
	 * The state of one key of a key space; only ever touched inside a {@code compute} on
	 * the key.
	 */
	private abstract static class Slot {

		final List<Runnable> subscribers = new ArrayList<>(1);

		/** Something was released or expired during the current operation. */
		boolean freed;

		/** Drops what expired or lapsed by {@code now}, setting {@link #freed}. */
		abstract void prune(long now);

		/** Whether nothing is held, queued or subscribed: the slot may go. */
		abstract boolean unused();

	}

	/**
	 * A lock's key: its writer (the plain lock), readers and waiting writers' intents.
	 */
	private static final class Entry extends Slot {

		@Nullable Holder holder;

		/** When the holder's lease runs out, on the monotonic clock. */
		long deadline;

		/** Fair waiters by arrival, each with the time its place lapses. */
		final Map<String, Long> queue = new LinkedHashMap<>(2);

		/** Read holds, each with its deadline. */
		final Map<ReadHold, Long> readers = new HashMap<>(2);

		/** Waiting writers' intents, each with the time it lapses. */
		final Map<String, Long> intents = new LinkedHashMap<>(2);

		/** Whether a writer may take the key: nobody holds it, neither side. */
		boolean free() {
			return this.holder == null && this.readers.isEmpty();
		}

		/** A waiter asked for the lock while its holder held it. */
		boolean waited;

		LockAttempt acquire(InMemoryLockProvider store, String key, long leaseNanos, long now,
				@Nullable String waiterId, int tokens) {
			long last = store.fence.addAndGet(tokens);
			this.holder = new Holder(store, key, last - tokens + 1, last, waiterId, new AtomicBoolean());
			this.waited = false;
			this.deadline = now + leaseNanos;
			return new LockAttempt.Acquired(this.holder);
		}

		/**
		 * Never zero, which means "unknown" and would make a waiter sleep a whole retry
		 * interval.
		 */
		LockAttempt busy(long now) {
			long until = this.deadline;
			if (this.holder == null) {
				// Readers, or intents: whichever ends first may change the answer.
				until = Long.MAX_VALUE;
				for (long deadline : this.readers.values()) {
					until = Math.min(until, deadline);
				}
				for (long lapse : this.intents.values()) {
					until = Math.min(until, lapse);
				}
			}
			return new LockAttempt.Busy(Duration.ofNanos(Math.max(1, until - now)));
		}

		/**
		 * Expiry by lease, found out lazily; lapsed places leave the queue, lapsed
		 * intents let readers in.
		 */
		@Override
		void prune(long now) {
			if (this.holder != null && now - this.deadline >= 0) {
				this.holder = null;
				this.freed = true;
			}
			this.queue.values().removeIf((lapsesAt) -> now - lapsesAt >= 0);
			if (this.readers.values().removeIf((deadline) -> now - deadline >= 0)) {
				this.freed = true;
			}
			if (this.intents.values().removeIf((lapsesAt) -> now - lapsesAt >= 0)) {
				this.freed = true;
			}
		}

		@Override
		boolean unused() {
			return this.holder == null && this.queue.isEmpty() && this.subscribers.isEmpty() && this.readers.isEmpty()
					&& this.intents.isEmpty();
		}

	}

	/**
	 * One acquisition. The handle itself is the owner: identity, not a name, decides
	 * whether it still holds the key.
	 *
	 * @param lastToken the last token of the block it reserved
	 * @param waiterId the fair waiter that took the lock, if any
	 * @param waitedAtRelease whether a waiter had marked the key when it was released
	 */
	private record Holder(InMemoryLockProvider store, String key, long fencingToken, long lastToken,
			@Nullable String waiterId, AtomicBoolean waitedAtRelease) implements TokenBlock {

		@Override
		public boolean renew(Duration leaseTime) {
			long lease = positive(leaseTime);
			return Boolean.TRUE.equals(this.store.update(this.key, false, (entry, now) -> {
				if (entry.holder != this) {
					return false;
				}
				entry.deadline = now + lease;
				return true;
			}));
		}

		@Override
		public boolean release() {
			return Boolean.TRUE.equals(this.store.update(this.key, false, (entry, now) -> {
				if (entry.holder != this) {
					return false;
				}
				entry.holder = null;
				entry.freed = true;
				this.waitedAtRelease.set(entry.waited);
				return true;
			}));
		}

		@Override
		public boolean releasedToWaiters() {
			return this.waitedAtRelease.get();
		}

		@Override
		public boolean stillHeld() {
			return Boolean.TRUE.equals(this.store.update(this.key, false, (entry, now) -> entry.holder == this));
		}

		@Override
		public String toString() {
			return "InMemoryLock[key=" + this.key + ", token=" + this.fencingToken + "]";
		}

	}

	/** A semaphore: its count and its held permits, each with its deadline. */
	private static final class Semaphore extends Slot {

		int permits;

		final Map<Permit, Long> holders = new HashMap<>(4);

		@Override
		void prune(long now) {
			if (this.holders.values().removeIf((deadline) -> now - deadline >= 0)) {
				this.freed = true;
			}
		}

		@Override
		boolean unused() {
			return this.holders.isEmpty() && this.subscribers.isEmpty();
		}

	}

	/**
	 * A read hold or a permit: the handle is the owner, by identity (no value equality,
	 * so two holds never stand for each other in the maps that key on them).
	 */
	private abstract static class SharedHold implements LockHandle {

		final InMemoryLockProvider store;

		final String key;

		private final long fencingToken;

		SharedHold(InMemoryLockProvider store, String key, long fencingToken) {
			this.store = store;
			this.key = key;
			this.fencingToken = fencingToken;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.fencingToken;
		}

		@Override
		public String toString() {
			return "InMemory" + getClass().getSimpleName() + "[key=" + this.key + ", token=" + this.fencingToken + "]";
		}

	}

	/** One read hold. */
	private static final class ReadHold extends SharedHold {

		ReadHold(InMemoryLockProvider store, String key, long fencingToken) {
			super(store, key, fencingToken);
		}

		@Override
		public boolean renew(Duration leaseTime) {
			long lease = positive(leaseTime);
			return Boolean.TRUE.equals(this.store.update(this.key, false,
					(entry, now) -> entry.readers.computeIfPresent(this, (hold, deadline) -> now + lease) != null));
		}

		@Override
		public boolean release() {
			return Boolean.TRUE.equals(this.store.update(this.key, false, (entry, now) -> {
				if (entry.readers.remove(this) == null) {
					return false;
				}
				if (entry.readers.isEmpty()) {
					entry.freed = true;
				}
				return true;
			}));
		}

	}

	/** One permit of a semaphore. */
	private static final class Permit extends SharedHold {

		Permit(InMemoryLockProvider store, String key, long fencingToken) {
			super(store, key, fencingToken);
		}

		@Override
		public boolean renew(Duration leaseTime) {
			long lease = positive(leaseTime);
			return Boolean.TRUE
				.equals(this.store.update(this.store.semaphores, Semaphore::new, this.key, false, (semaphore,
						now) -> semaphore.holders.computeIfPresent(this, (permit, deadline) -> now + lease) != null));
		}

		@Override
		public boolean release() {
			return Boolean.TRUE
				.equals(this.store.update(this.store.semaphores, Semaphore::new, this.key, false, (semaphore, now) -> {
					if (semaphore.holders.remove(this) == null) {
						return false;
					}
					semaphore.freed = true;
					return true;
				}));
		}

	}

}
