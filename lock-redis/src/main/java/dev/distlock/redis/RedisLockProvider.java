package dev.distlock.redis;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Locks in Redis over the application's Lettuce {@link RedisConnectionFactory}. Scripts
 * run as raw bytes on Lettuce's asynchronous API, so user serializers never touch lock
 * keys, and every call is bounded by the store timeout whatever the client's command
 * timeout (see {@link RedisCalls}).
 *
 * <p>
 * Each acquisition gets a fresh owner token ({@code <instance uuid>:<sequence>}), unique
 * per JVM instance and per acquisition: a handle whose lease expired cannot delete or
 * renew the lock that a later acquisition took, even one by the same thread. Acquire,
 * renew and release are one script call (one round trip) each.
 *
 * <p>
 * This class is the store's entry: it says which kinds it supports, hands each request to
 * the class of its primitive, and owns the connection, the release signals and the
 * replica guard's settings. Who does what:
 * <ul>
 * <li>plain locks and token blocks: {@link RedisMutexes}, held as a
 * {@link RedisLockHandle};</li>
 * <li>fair locks: {@link RedisFairLocks}, with the grants received on release in
 * {@link FairGrants};</li>
 * <li>read-write locks and semaphores: {@link RedisFamily};</li>
 * <li>multi-key locks ({@link LockKind#MULTI}), one script call per cluster slot:
 * {@link RedisMultiLocks};</li>
 * <li>countdown latches ({@link LatchStore}), hashes of their own:
 * {@link RedisLatches};</li>
 * <li>release signals: {@link RedisReleaseSignals}; batch renewal:
 * {@link SlotBatchRenewal}; calls bounded by the store timeout: {@link RedisCalls}; key
 * names: {@link RedisKeys}.</li>
 * </ul>
 */
public final class RedisLockProvider
		implements ReleaseSignalling, BatchRenewal, BatchRelease, LocalHandover, AutoCloseable {

	private static final Set<LockKind> KINDS = Collections.unmodifiableSet(EnumSet.allOf(LockKind.class));

	/**
	 * What the replica guard leaves: plain locks, whose acquire script its WAIT covers.
	 */
	private static final Set<LockKind> GUARDED_KINDS = Set.of(LockKind.EXCLUSIVE);

	private final RedisConnectionFactory connectionFactory;

	/** The bound of one call when none is configured. */
	public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofSeconds(3);

	private final RedisCalls calls;

	private final SlotBatchRenewal renewal;

	private final RedisKeys keys;

	private final int waitForReplicas;

	private final RedisReleaseSignals signals;

	private final ReleaseSignals releaseSignals;

	/** Read-write locks and semaphores. */
	private final RedisFamily family;

	private final FairGrants grants = new FairGrants();

	/** Plain locks and token blocks, and their handles. */
	private final RedisMutexes mutexes;

	private final RedisFairLocks fairLocks;

	private final RedisMultiLocks multiLocks;

	private final RedisLatches latches;

	/**
	 * @param connectionFactory the connection factory to use
	 * @param keyPrefix prepended to every key; non-empty, not starting with '{'
	 * @param cluster whether the server is a Redis Cluster (fencing counters are then
	 * kept per slot, and release signals are sharded if every master runs Redis 7)
	 */
	public RedisLockProvider(RedisConnectionFactory connectionFactory, String keyPrefix, boolean cluster) {
		this(connectionFactory, keyPrefix, cluster, 0, Duration.ZERO);
	}

	/**
	 * @param connectionFactory the connection factory to use
	 * @param keyPrefix prepended to every key; non-empty, not starting with '{'
	 * @param cluster whether the server is a Redis Cluster (fencing counters are then
	 * kept per slot, and release signals are sharded if every master runs Redis 7)
	 * @param waitForReplicas how many replicas must acknowledge each acquire
	 * ({@code WAIT}) before it counts; 0 turns the guard off, and must be 0 on a Redis
	 * Cluster
	 * @param replicaTimeout how long {@code WAIT} may take
	 */
	public RedisLockProvider(RedisConnectionFactory connectionFactory, String keyPrefix, boolean cluster,
			int waitForReplicas, Duration replicaTimeout) {
		this(connectionFactory, keyPrefix, cluster, waitForReplicas, replicaTimeout, DEFAULT_STORE_TIMEOUT);
	}

	/**
	 * @param connectionFactory the connection factory to use; must be Lettuce's
	 * @param keyPrefix prepended to every key; non-empty, not starting with '{'
	 * @param cluster whether the server is a Redis Cluster (fencing counters are then
	 * kept per slot, and release signals are sharded if every master runs Redis 7)
	 * @param waitForReplicas how many replicas must acknowledge each acquire
	 * ({@code WAIT}) before it counts; 0 turns the guard off, and must be 0 on a Redis
	 * Cluster
	 * @param replicaTimeout how long {@code WAIT} may take; less than
	 * {@code storeTimeout}
	 * @param storeTimeout the longest a caller waits for Redis in one call, whatever the
	 * client's command timeout
	 */
	public RedisLockProvider(RedisConnectionFactory connectionFactory, String keyPrefix, boolean cluster,
			int waitForReplicas, Duration replicaTimeout, Duration storeTimeout) {
		checkSettings(connectionFactory, cluster, waitForReplicas, replicaTimeout, storeTimeout);
		this.connectionFactory = connectionFactory;
		this.calls = new RedisCalls(connectionFactory, storeTimeout);
		this.calls.connectEarly();
		this.keys = new RedisKeys(keyPrefix, cluster);
		this.waitForReplicas = waitForReplicas;
		this.signals = new RedisReleaseSignals(connectionFactory, this.keys, this.grants::onMessage);
		this.renewal = new SlotBatchRenewal(this.keys, this.calls);
		this.mutexes = new RedisMutexes(connectionFactory, this.calls, this.keys, this.signals, waitForReplicas,
				replicaTimeout);
		this.family = new RedisFamily(this.keys, this.calls, this.signals, this.mutexes::newOwner,
				(key) -> this.mutexes.signalRefused(key, this.keys.lockKey(key)));
		this.fairLocks = new RedisFairLocks(this.mutexes, this.calls, this.keys, this.signals, this.grants);
		this.multiLocks = new RedisMultiLocks(this, this.calls, this.keys);
		this.latches = new RedisLatches(this, this.calls, this.keys, this.signals);
		this.releaseSignals = new ReleaseSignals() {

			@Override
			public Subscription subscribe(String key, Runnable onRelease) {
				return RedisLockProvider.this.signals.subscribe(RedisLockProvider.this.keys.lockKey(key), onRelease);
			}

			@Override
			public boolean isListening() {
				return RedisLockProvider.this.signals.isListening();
			}

			@Override
			public boolean isListening(String key) {
				return RedisLockProvider.this.signals.isListening(RedisLockProvider.this.keys.lockKey(key));
			}

		};
	}

	private static void checkSettings(RedisConnectionFactory connectionFactory, boolean cluster, int waitForReplicas,
			Duration replicaTimeout, Duration storeTimeout) {
		if (storeTimeout.isNegative() || storeTimeout.isZero()) {
			throw new IllegalArgumentException("storeTimeout must be positive but was " + storeTimeout);
		}
		if (waitForReplicas > 0 && replicaTimeout.compareTo(storeTimeout) >= 0) {
			throw new IllegalArgumentException("The replica acknowledgement timeout (" + replicaTimeout.toMillis()
					+ "ms) must be shorter than the store timeout (" + storeTimeout.toMillis()
					+ "ms, distributed-lock.store-timeout), which bounds the whole acquire");
		}
		if (waitForReplicas < 0) {
			throw new IllegalArgumentException("waitForReplicas must not be negative but was " + waitForReplicas);
		}
		if (waitForReplicas > 0 && (replicaTimeout.isNegative() || replicaTimeout.isZero())) {
			throw new IllegalArgumentException("replicaTimeout must be positive but was " + replicaTimeout);
		}
		if (waitForReplicas > 0 && (cluster || isClusterAware(connectionFactory))) {
			throw new IllegalArgumentException("waitForReplicas (distributed-lock.redis.wait-for-replicas) must be 0"
					+ " on a Redis Cluster but was " + waitForReplicas + ": the replica guard is not supported there"
					+ " yet, since Spring Data Redis sends the arguments of WAIT as keys, so it would go to the node"
					+ " of their slot, not the lock's, and confirm the wrong writes");
		}
	}

	private static boolean isClusterAware(RedisConnectionFactory connectionFactory) {
		return connectionFactory instanceof LettuceConnectionFactory lettuce && lettuce.isClusterAware();
	}

	/**
	 * One subscription connection per provider, started on the first wait: to channel
	 * {@code <key-prefix>released}, or, on a cluster of Redis 7 masters, sharded
	 * subscriptions to the channels of the slots being waited on (see
	 * {@link RedisReleaseSignals}).
	 */
	@Override
	public ReleaseSignals releaseSignals() {
		return this.releaseSignals;
	}

	/**
	 * One script call per kind of lock (plain locks, read holds, permits), per cluster
	 * slot and per batch, all sent before any reply is awaited and each reported as it
	 * answers, so a master that hangs or fails costs only the locks it holds (see
	 * {@link SlotBatchRenewal}).
	 */
	@Override
	public void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		this.renewal.renewAll(handles, leaseTimes, results);
	}

	/**
	 * Readers are a hash at the lock key, so the mutex's {@code SET NX} fails while they
	 * hold it; see {@link FamilyScripts}. Not offered with the replica guard
	 * ({@code distributed-lock.redis.wait-for-replicas}), whose {@code WAIT} covers the
	 * mutex's scripts only.
	 */
	private CompletableFuture<LockAttempt> tryLockShared(String key, Duration leaseTime, boolean waiting) {
		return this.family.tryLockShared(key, leaseTime, waiting);
	}

	/**
	 * Without an intent recorded, a free key costs what a plain lock
	 * ({@link RedisMutexes}) costs: {@code INCR} and {@code SET NX} inside the script.
	 */
	private CompletableFuture<LockAttempt> tryLockExclusive(String key, Duration leaseTime, String waiterId,
			Duration intentTimeout, boolean intentRecorded) {
		if (this.waitForReplicas > 0) {
			return this.mutexes.tryLock(key, leaseTime, true);
		}
		return this.family.tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded,
				this.mutexes::handle);
	}

	/**
	 * The write-lock script reserves the block as the acquire script does (the counter
	 * left at the block's last token in the same {@code SET ... GET}, put back by a busy
	 * attempt). With the replica guard on, a single token, as
	 * {@link RedisMutexes#tryLockBlock}.
	 */
	private CompletableFuture<LockAttempt> tryLockExclusive(String key, Duration leaseTime, String waiterId,
			Duration intentTimeout, boolean intentRecorded, int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		if (this.waitForReplicas > 0 || tokens == 1) {
			return tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded);
		}
		return this.family.tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded, tokens,
				this.mutexes::handle);
	}

	private void withdrawIntent(String key, String waiterId) {
		if (this.waitForReplicas == 0) {
			this.family.withdrawIntent(key, waiterId);
		}
	}

	/**
	 * A semaphore is a sorted set of permits scored by their expiry on the server's clock
	 * (see {@link FamilyScripts}). Not offered with the replica guard.
	 */
	private CompletableFuture<LockAttempt> tryAcquirePermit(String key, int permits, Duration leaseTime,
			boolean waiting) {
		return this.family.tryAcquirePermit(key, permits, leaseTime, waiting);
	}

	/** On the release channel, with the semaphore's Redis key as the message. */
	@Override
	public ReleaseSignals permitSignals() {
		return this.family.permitSignals();
	}

	/** Every call returns within the store timeout. */
	@Override
	public Duration callTimeout() {
		return this.calls.timeout();
	}

	@Override
	public String storeName() {
		return "redis";
	}

	/**
	 * Every kind; with the replica guard
	 * ({@code distributed-lock.redis.wait-for-replicas}) plain locks only, since the
	 * guard's {@code WAIT} covers the mutex's acquire script only.
	 */
	@Override
	public Set<LockKind> kinds() {
		return (this.waitForReplicas > 0) ? GUARDED_KINDS : KINDS;
	}

	@Override
	public String unsupportedReason(LockKind kind) {
		String guard = " cannot be combined with the redis store's replica guard"
				+ " (distributed-lock.redis.wait-for-replicas): ";
		return switch (kind) {
			case FAIR -> "Fair locks" + guard + "the guard's WAIT needs a connection of its own per acquire, which"
					+ " the fair queue's scripts do not use.";
			case MULTI -> "Multi-key locks" + guard + "the guard's WAIT covers one acquire script per connection, and"
					+ " a multi-key acquire may run one per cluster slot.";
			default -> kind.description() + guard + "the guard's WAIT covers plain locks only.";
		};
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Returns without waiting for Redis, for every kind: the answer completes when Redis
	 * replies (on a client I/O thread), or fails at the store timeout, the acquire then
	 * undone by its owner token at once and again once Redis has run it. The first call
	 * after start or after a connection reset does not wait for the connection either. A
	 * multi-key acquire across cluster slots sends each slot's call once the one before
	 * has answered. With the replica guard
	 * ({@code distributed-lock.redis.wait-for-replicas}), the acquire and its
	 * {@code WAIT} block a thread of the guard's own, not the caller's.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		try {
			return take(request);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private CompletableFuture<LockAttempt> take(LockRequest request) {
		if (!kinds().contains(request.kind())) {
			throw Capabilities.unsupported(this, request.kind(), request.key());
		}
		String key = request.key();
		Duration leaseTime = request.leaseTime();
		String waiterId = request.waiterId();
		return switch (request.kind()) {
			case EXCLUSIVE ->
				(waiterId == null) ? this.mutexes.tryLockBlock(key, leaseTime, request.waiting(), request.tokens())
						: (request.tokens() > 1 && !request.intentRecorded())
								? this.mutexes.tryLockBlock(key, leaseTime, request.tokens(), waiterId,
										request.queueTimeout())
								: tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout(),
										request.intentRecorded(), request.tokens());
			case FAIR ->
				this.fairLocks.tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> tryLockShared(key, leaseTime, request.waiting());
			case PERMITS -> tryAcquirePermit(key, request.permits(), leaseTime, request.waiting());
			case MULTI -> this.multiLocks.tryLockAll(request.keys(), leaseTime, request.waiting());
		};
	}

	@Override
	public void withdraw(LockRequest request) {
		String waiterId = Objects.requireNonNull(request.waiterId());
		if (request.kind() == LockKind.FAIR) {
			this.fairLocks.leaveQueue(request.key(), waiterId);
		}
		else {
			withdrawIntent(request.key(), waiterId);
		}
	}

	/** Stops the release subscription and gives the connection back. */
	@Override
	public void close() {
		this.signals.close();
		this.calls.close();
		this.mutexes.close();
	}

	/** How this provider names keys in Redis, for the module's tests. */
	RedisKeys keysForTests() {
		return this.keys;
	}

	/**
	 * Whether the release subscription's first start is over, with its wake of every
	 * waiter that polled until then; for tests that count wakes.
	 */
	boolean signalsStartFinished() {
		return this.signals.startFinished();
	}

	/** Keys that a waiter of this JVM listens for; 0 when nobody waits. */
	public int subscribedKeys() {
		return this.signals.subscribedKeys();
	}

	/** Whether the release subscription is up; until it is, waiters poll. */
	public boolean isListening() {
		return this.signals.isListening();
	}

	/**
	 * Cluster slots with a sharded release subscription (Redis 7 clusters only); 0 when
	 * nobody waits.
	 */
	public int subscribedSlots() {
		return this.signals.subscribedSlots();
	}

	/**
	 * Whether release signals use sharded pub/sub; false until decided (on a cluster, at
	 * the first wait or release) and on standalone servers.
	 */
	public boolean isShardedPubSub() {
		return this.signals.signalMode() == SignalMode.SHARDED;
	}

	/** One script call per cluster slot and owner. */
	@Override
	public List<Boolean> releaseAll(List<LockHandle> handles) {
		return this.multiLocks.releaseAll(handles);
	}

	@Override
	public Optional<LatchStore> latches() {
		return Optional.of(this.latches);
	}

	/** A fresh owner token: unique to this provider instance and this acquisition. */
	String newOwner() {
		return this.mutexes.newOwner();
	}

	/** The handle of a lock taken under {@code owner} by a script of this provider. */
	RedisLockHandle handle(String key, String lockKey, String owner, long fencingToken) {
		return this.mutexes.handle(key, lockKey, owner, fencingToken);
	}

	/**
	 * Fair waits under way in this provider (each ends when it acquires or leaves the
	 * queue); 0 when nobody waits for a fair lock.
	 */
	int fairWaits() {
		return this.fairLocks.fairWaits();
	}

	/**
	 * The channel on which to signal {@code redisKey}, and whether to publish sharded.
	 */
	String[] publishArgs(String redisKey) {
		return this.signals.publishArgs(redisKey);
	}

}
