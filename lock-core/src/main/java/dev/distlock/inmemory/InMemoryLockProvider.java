package dev.distlock.inmemory;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;

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
 *
 * <p>
 * This class is the store's entry: it hands each request to the class of its primitive.
 * Plain locks and token blocks: {@link InMemoryMutexes}; fair locks:
 * {@link InMemoryFairLocks}; read-write locks: {@link InMemoryReadWriteLocks}; multi-key
 * locks: {@link InMemoryMultiLocks}; semaphores: {@link InMemorySemaphores}; latches:
 * {@link InMemoryLatches}. Locks' keys and semaphores' keys are each a {@link KeySpace}.
 */
public final class InMemoryLockProvider implements ReleaseSignalling, LocalHandover {

	private static final Set<LockKind> KINDS = Collections.unmodifiableSet(EnumSet.allOf(LockKind.class));

	private static final int MIN_SWEEP_SIZE = 256;

	/** One entry per lock key in use. */
	private final KeySpace<LockEntry> locks = new KeySpace<>(LockEntry::new);

	/** One counter for every key: tokens then rise per key as well. */
	private final AtomicLong fence = new AtomicLong();

	private final AtomicBoolean sweeping = new AtomicBoolean();

	private volatile int sweepAt = MIN_SWEEP_SIZE;

	private final InMemoryLatches latches = new InMemoryLatches();

	private final InMemoryMutexes mutexes = new InMemoryMutexes(this.locks, this.fence, this::sweepIfGrown);

	private final InMemoryReadWriteLocks readWrite = new InMemoryReadWriteLocks(this.locks, this.fence,
			this::sweepIfGrown);

	private final InMemoryFairLocks fair = new InMemoryFairLocks(this.locks, this.fence, this::sweepIfGrown);

	private final InMemoryMultiLocks multiLocks = new InMemoryMultiLocks(this.locks, this.fence, this::sweepIfGrown);

	/** Semaphores, a key space of their own. */
	private final InMemorySemaphores semaphores = new InMemorySemaphores(this.fence, this::sweepIfGrown);

	@Override
	public ReleaseSignals releaseSignals() {
		return this.locks.signals();
	}

	/** Every freed permit is signalled to every waiter of its semaphore. */
	@Override
	public ReleaseSignals permitSignals() {
		return this.semaphores.signals();
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
			case EXCLUSIVE ->
				(waiterId == null) ? this.mutexes.tryLockBlock(key, leaseTime, request.waiting(), request.tokens())
						: (request.tokens() > 1 && !request.intentRecorded())
								? this.mutexes.tryLockBlock(key, leaseTime, request.tokens(), waiterId,
										request.queueTimeout())
								: this.readWrite.tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout(),
										request.tokens());
			case FAIR ->
				this.fair.tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> this.readWrite.tryLockShared(key, leaseTime);
			case PERMITS -> this.semaphores.tryAcquirePermit(key, request.permits(), leaseTime);
			case MULTI -> this.multiLocks.tryLockAll(request.keys(), leaseTime);
		};
	}

	@Override
	public void withdraw(LockRequest request) {
		String waiterId = Objects.requireNonNull(request.waiterId());
		if (request.kind() == LockKind.FAIR) {
			this.fair.leaveQueue(request.key(), waiterId);
		}
		else {
			this.readWrite.withdrawIntent(request.key(), waiterId);
		}
	}

	@Override
	public Optional<LatchStore> latches() {
		return Optional.of(this.latches);
	}

	/**
	 * Ends the current lease on {@code key} at once, as if it had run out: for tests of
	 * what a holder does when its lease is lost. Waiters are signalled.
	 * @return whether a lease was held
	 */
	public boolean expire(String key) {
		return Boolean.TRUE.equals(this.locks.update(key, false, (entry, now) -> {
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
		return this.semaphores.expirePermits(key);
	}

	/** Permits of the semaphore {@code key} held now (expired ones not counted). */
	public int heldPermits(String key) {
		return this.semaphores.heldPermits(key);
	}

	/** Read holds on {@code key} now (expired ones not counted). */
	public int readers(String key) {
		return this.readWrite.readers(key);
	}

	/** Fair waiters queued for {@code key} whose place has not lapsed. */
	public int queueLength(String key) {
		return this.fair.queueLength(key);
	}

	/**
	 * Keys with a holder, a queued waiter or a subscriber: 0 once every lock is released
	 * and nobody waits (expired locks may count until the store next sweeps).
	 */
	public int storedKeys() {
		return this.locks.size() + this.semaphores.space().size();
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
	 * Drops expired entries once the map has doubled since the last sweep, so that keys
	 * locked once and never touched again cost amortised constant time and bounded
	 * memory, without a timer thread.
	 */
	private void sweepIfGrown() {
		if (storedKeys() < this.sweepAt || !this.sweeping.compareAndSet(false, true)) {
			return;
		}
		try {
			this.locks.sweep();
			this.semaphores.space().sweep();
			this.sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * storedKeys());
		}
		finally {
			this.sweeping.set(false);
		}
	}

}
