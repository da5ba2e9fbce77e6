package dev.distlock.redis;

import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.DistributedLatch;
import dev.distlock.LockBackendException;
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
import dev.distlock.spi.TokenBlock;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

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
 * Multi-key locks ({@link LockKind#MULTI}) take their keys in one script call per cluster
 * slot ({@link RedisMultiLocks}); countdown latches ({@link LatchStore}) are hashes of
 * their own ({@link RedisLatches}).
 */
public final class RedisLockProvider
		implements ReleaseSignalling, BatchRenewal, BatchRelease, LocalHandover, AutoCloseable {

	private static final Set<LockKind> KINDS = Collections.unmodifiableSet(EnumSet.allOf(LockKind.class));

	/**
	 * What the replica guard leaves: plain locks, whose acquire script its WAIT covers.
	 */
	private static final Set<LockKind> GUARDED_KINDS = Set.of(LockKind.EXCLUSIVE);

	private static final Log logger = LogFactory.getLog(RedisLockProvider.class);

	private final RedisConnectionFactory connectionFactory;

	/** The bound of one call when none is configured. */
	public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofSeconds(3);

	private final RedisCalls calls;

	private final SlotBatchRenewal renewal;

	/** The failover guard's acquire; null when the guard is off. */
	private final @Nullable ReplicaGuard replicaGuard;

	private final RedisKeys keys;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final int waitForReplicas;

	private final RedisReleaseSignals signals;

	private final ReleaseSignals releaseSignals;

	private final Duration replicaTimeout;

	private final AtomicBoolean signalRefusalReported = new AtomicBoolean();

	/** Read-write locks and semaphores. */
	private final RedisFamily family;

	private final FairGrants grants = new FairGrants();

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
		this.connectionFactory = connectionFactory;
		this.calls = new RedisCalls(connectionFactory, storeTimeout);
		this.calls.connectEarly();
		this.keys = new RedisKeys(keyPrefix, cluster);
		this.waitForReplicas = waitForReplicas;
		this.replicaTimeout = replicaTimeout;
		this.signals = new RedisReleaseSignals(connectionFactory, this.keys, this.grants::onMessage);
		this.renewal = new SlotBatchRenewal(this.keys, this.calls);
		this.family = new RedisFamily(this.keys, this.calls, this.signals,
				() -> this.instanceId + ":" + this.sequence.incrementAndGet(),
				(key) -> signalRefused(key, this.keys.lockKey(key)));
		this.replicaGuard = (waitForReplicas > 0) ? new ReplicaGuard(connectionFactory, this.keys, this.signals,
				this.calls, waitForReplicas, replicaTimeout, this::abandon) : null;
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
	private LockAttempt tryLockShared(String key, Duration leaseTime, boolean waiting) {
		return this.family.tryLockShared(key, leaseTime, waiting);
	}

	/**
	 * Without an intent recorded, a free key costs what {@link #tryLock} costs:
	 * {@code INCR} and {@code SET NX} inside the script.
	 */
	private LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout,
			boolean intentRecorded) {
		if (this.waitForReplicas > 0) {
			return tryLock(key, leaseTime, true);
		}
		return this.family.tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded,
				RedisLockHandle::new);
	}

	/**
	 * The write-lock script reserves the block as the acquire script does (the counter
	 * left at the block's last token in the same {@code SET ... GET}, put back by a busy
	 * attempt). With the replica guard on, a single token, as {@link #tryLockBlock}.
	 */
	private LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout,
			boolean intentRecorded, int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		if (this.waitForReplicas > 0 || tokens == 1) {
			return tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded);
		}
		return this.family.tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded, tokens,
				RedisLockHandle::new);
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
	private LockAttempt tryAcquirePermit(String key, int permits, Duration leaseTime, boolean waiting) {
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

	private ReplicaGuard guard() {
		ReplicaGuard guard = this.replicaGuard;
		if (guard == null) {
			throw new IllegalStateException("The replica guard is off");
		}
		return guard;
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
	 * Answers on the calling thread, within the store timeout.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> take(request));
	}

	private LockAttempt take(LockRequest request) {
		if (!kinds().contains(request.kind())) {
			throw Capabilities.unsupported(this, request.kind(), request.key());
		}
		String key = request.key();
		Duration leaseTime = request.leaseTime();
		String waiterId = request.waiterId();
		return switch (request.kind()) {
			case EXCLUSIVE -> (waiterId == null) ? tryLockBlock(key, leaseTime, request.waiting(), request.tokens())
					: (request.tokens() > 1 && !request.intentRecorded())
							? tryLockBlock(key, leaseTime, request.tokens(), waiterId, request.queueTimeout())
							: tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout(),
									request.intentRecorded(), request.tokens());
			case FAIR -> tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> tryLockShared(key, leaseTime, request.waiting());
			case PERMITS -> tryAcquirePermit(key, request.permits(), leaseTime, request.waiting());
			case MULTI -> this.multiLocks.tryLockAll(request.keys(), leaseTime, request.waiting());
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

	/** Stops the release subscription and gives the connection back. */
	@Override
	public void close() {
		this.signals.close();
		this.calls.close();
		if (this.replicaGuard != null) {
			this.replicaGuard.close();
		}
	}

	/** How this provider names keys in Redis, for the module's tests. */
	RedisKeys keysForTests() {
		return this.keys;
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
		return this.instanceId + ":" + this.sequence.incrementAndGet();
	}

	/** The handle of a lock taken under {@code owner} by a script of this provider. */
	RedisLockHandle handle(String key, String lockKey, String owner, long fencingToken) {
		return new RedisLockHandle(key, lockKey, owner, fencingToken);
	}

	/**
	 * The channel on which to signal {@code redisKey}, and whether to publish sharded.
	 */
	String[] publishArgs(String redisKey) {
		return this.signals.publishArgs(redisKey);
	}

	private LockAttempt tryLock(String key, Duration leaseTime, boolean waiting) {
		return tryLockBlock(key, leaseTime, waiting, 1);
	}

	/**
	 * The acquire script moves the slot's fencing counter past the block ({@code INCRBY})
	 * in the same call, one more command than a plain acquire. With the failover guard on
	 * ({@code wait-for-replicas}), the block is a single token, so such a lock is never
	 * handed over locally.
	 */
	private LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		String waitingFlag = waiting ? "1" : "0";
		if (tokens > 1 && this.waitForReplicas == 0) {
			return attempt(key, newOwner(), tokens,
					(lockKey, owner, deadline) -> this.calls.<Long>call(key, "acquire", LockScripts.ACQUIRE,
							ScriptOutputType.INTEGER, deadline, RedisCalls.args(lockKey, this.keys.fenceKey(lockKey)),
							RedisCalls.args(owner, millis(leaseTime), waitingFlag, Integer.toString(tokens))),
					false);
		}
		return attempt(key, newOwner(),
				(lockKey, owner, deadline) -> (this.waitForReplicas > 0)
						? guard().acquire(key, lockKey, owner, millis(leaseTime), waitingFlag, deadline)
						: this.calls.<Long>call(key, "acquire", LockScripts.ACQUIRE, ScriptOutputType.INTEGER, deadline,
								RedisCalls.args(lockKey, this.keys.fenceKey(lockKey)),
								RedisCalls.args(owner, millis(leaseTime), waitingFlag)));
	}

	/**
	 * The same acquire script as {@link #tryLockBlock(String, Duration, boolean, int)},
	 * given the intents' key and the writer: behind readers it records the intent with
	 * the commands {@link #tryLockExclusive} uses, so a free key or a key held by another
	 * writer costs no command more. With the replica guard on, the guarded acquire
	 * without an intent, as {@link #tryLockExclusive}.
	 */
	private LockAttempt tryLockBlock(String key, Duration leaseTime, int tokens, String waiterId,
			Duration intentTimeout) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		if (this.waitForReplicas > 0) {
			return tryLockBlock(key, leaseTime, true, tokens);
		}
		return attempt(key, newOwner(), tokens, (lockKey, owner, deadline) -> this.calls.<Long>call(key, "acquire",
				LockScripts.ACQUIRE, ScriptOutputType.INTEGER, deadline,
				RedisCalls.args(lockKey, this.keys.fenceKey(lockKey), this.keys.intentsKey(lockKey)), RedisCalls
					.args(owner, millis(leaseTime), "1", Integer.toString(tokens), waiterId, millis(intentTimeout))),
				false);
	}

	private LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		String lockKey = this.keys.lockKey(key);
		FairGrants.Wait wait = this.grants.waitFor(waiterId, lockKey, this::newOwner);
		long granted = wait.freshToken(leaseTime.toNanos() / 2);
		if (granted > 0) {
			// Granted on release, and the grant is fresh: held without asking again. The
			// grant's claim is extended to the lease by a renewal sent now and not waited
			// for; if it comes too late, the next renewal finds the lock lost.
			this.grants.done(waiterId);
			extendGrant(key, lockKey, wait.owner, leaseTime);
			return new LockAttempt.Acquired(new RedisLockHandle(key, lockKey, wait.owner, granted, true));
		}
		LockAttempt attempt = attempt(key, wait.owner,
				(fairKey, owner, deadline) -> this.calls.<Long>call(key, "acquire", LockScripts.FAIR_ACQUIRE,
						ScriptOutputType.INTEGER, deadline,
						RedisCalls.args(fairKey, this.keys.fenceKey(fairKey), this.keys.queueKey(fairKey),
								this.keys.waiterDeadlinesKey(fairKey)),
						RedisCalls.args(owner, millis(leaseTime), waiterId, millis(queueTimeout))),
				true);
		if (attempt instanceof LockAttempt.Acquired) {
			this.grants.done(waiterId);
		}
		return attempt;
	}

	/**
	 * Fair waits under way in this provider (each ends when it acquires or leaves the
	 * queue); 0 when nobody waits for a fair lock.
	 */
	int fairWaits() {
		return this.grants.size();
	}

	private void extendGrant(String key, String lockKey, String owner, Duration leaseTime) {
		try {
			this.calls
				.send(key, "renew", LockScripts.RENEW, ScriptOutputType.INTEGER, this.calls.deadline(),
						RedisCalls.args(lockKey), RedisCalls.args(owner, millis(leaseTime)))
				.whenComplete((result, failure) -> {
					if (failure != null && logger.isDebugEnabled()) {
						logger.debug("Could not extend the lock '" + key + "' granted on release to its lease;"
								+ " the next renewal tells", failure);
					}
				});
		}
		catch (RuntimeException ex) {
			logger.debug("Could not extend the lock '" + key + "' granted on release to its lease", ex);
		}
	}

	/**
	 * One acquire script call under a fresh owner token; a failed call (whose lock may
	 * have been taken, or may still be taken when a queued command runs late) is undone
	 * by that token.
	 */
	private LockAttempt attempt(String key, String owner, AcquireCall call) {
		return attempt(key, owner, 1, call, false);
	}

	private LockAttempt attempt(String key, String owner, AcquireCall call, boolean fair) {
		return attempt(key, owner, 1, call, fair);
	}

	private LockAttempt attempt(String key, String owner, int tokens, AcquireCall call, boolean fair) {
		String lockKey = this.keys.lockKey(key);
		Long result;
		try {
			result = call.run(lockKey, owner, this.calls.deadline());
		}
		catch (LockBackendException ex) {
			RedisCalls.undoNowAndLate(ex, () -> abandon(key, lockKey, owner));
			throw ex;
		}
		if (result == null) {
			throw new LockBackendException(key, "Redis returned no reply to acquire lock '" + key + "'",
					new IllegalStateException("null script result"));
		}
		long token = LockScripts.grantedToken(result);
		if (token > 0) {
			return new LockAttempt.Acquired(new RedisLockHandle(key, lockKey, owner, token,
					LockScripts.grantedLastToken(result, tokens), fair));
		}
		return new LockAttempt.Busy(Duration.ofMillis(-result - 1));
	}

	@FunctionalInterface
	private interface AcquireCall {

		@Nullable Long run(String lockKey, String owner, long deadlineNanos);

	}

	private void leaveQueue(String key, String waiterId) {
		String lockKey = this.keys.lockKey(key);
		FairGrants.Wait wait = this.grants.current(waiterId);
		this.grants.done(waiterId);
		// A lock granted to the waiter as it gave up is granted on by the script.
		String[] publish = this.signals.publishArgs(lockKey);
		this.calls.<Long>call(key, "leave the queue of", LockScripts.LEAVE_QUEUE, ScriptOutputType.INTEGER,
				this.calls.deadline(),
				RedisCalls.args(lockKey, this.keys.queueKey(lockKey), this.keys.waiterDeadlinesKey(lockKey),
						this.keys.fenceKey(lockKey)),
				RedisCalls.args(waiterId, publish[0], publish[1], (wait != null) ? wait.owner : "-"));
	}

	/**
	 * Redis refused to {@code PUBLISH} a release signal (an ACL user without the right to
	 * publish to the channel). The release itself happened; waiters in other JVMs find
	 * the lock free at their retry interval instead of at once. Said once, as a warning,
	 * since it repeats on every contended release until the ACL is changed.
	 */
	private void signalRefused(String key, String lockKey) {
		String channel = this.signals.publishArgs(lockKey)[0];
		String message = "Lock '" + key + "' was released, but Redis refused to publish the release signal on channel '"
				+ channel + "' (does the Redis user lack the right to publish to it? With ACLs it needs +publish"
				+ " (+spublish on a Redis 7 cluster) and &" + channel
				+ "); waiters poll at their retry interval instead";
		if (this.signalRefusalReported.compareAndSet(false, true)) {
			logger.warn(message + ". Further refusals are logged at debug level.");
		}
		else if (logger.isDebugEnabled()) {
			logger.debug(message);
		}
	}

	/**
	 * The acquire reply was lost, late or refused, but the script may have run, or may
	 * still run from the connection's queue, and take the lock for an owner nobody knows.
	 * An owner-checked delete, sent at once and again once the acquire has run (see
	 * {@link RedisCalls#afterLateReply}), undoes that, so it does not block every caller
	 * for a whole lease; the owner is unique to this attempt, so nothing else can be
	 * deleted. Sent without waiting, not even for a connection: the caller already has
	 * its answer, and without a connection the acquire was never sent.
	 */
	private void abandon(String key, String lockKey, String owner) {
		try {
			this.calls
				.send(key, "clean up", LockScripts.RELEASE, ScriptOutputType.INTEGER, System.nanoTime(),
						RedisCalls.args(lockKey), RedisCalls.args(publishArgs(lockKey, owner)))
				.whenComplete((result, failure) -> {
					if (failure != null && logger.isDebugEnabled()) {
						logger.debug("Could not clean up after a failed acquire of lock '" + key
								+ "'; it expires after its lease if it was taken", failure);
					}
				});
		}
		catch (RuntimeException ex) {
			logger.debug("Could not clean up after a failed acquire of lock '" + key
					+ "'; it expires after its lease if it was taken", ex);
		}
	}

	/** {@code first}, then the release channel of the lock and whether to SPUBLISH. */
	private String[] publishArgs(String lockKey, String first) {
		String[] publish = this.signals.publishArgs(lockKey);
		return new String[] { first, publish[0], publish[1] };
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	final class RedisLockHandle implements TokenBlock, SlotBatchRenewal.Renewable {

		private final String key;

		final String lockKey;

		final String owner;

		private final long fencingToken;

		private final long lastToken;

		private volatile boolean releasedToWaiters;

		/** Whether the lock is fair: its release grants it to the next queued waiter. */
		private final boolean fair;

		RedisLockHandle(String key, String lockKey, String owner, long fencingToken) {
			this(key, lockKey, owner, fencingToken, fencingToken, false);
		}

		RedisLockHandle(String key, String lockKey, String owner, long fencingToken, long lastToken) {
			this(key, lockKey, owner, fencingToken, lastToken, false);
		}

		RedisLockHandle(String key, String lockKey, String owner, long fencingToken, boolean fair) {
			this(key, lockKey, owner, fencingToken, fencingToken, fair);
		}

		RedisLockHandle(String key, String lockKey, String owner, long fencingToken, long lastToken, boolean fair) {
			this.key = key;
			this.lockKey = lockKey;
			this.owner = owner;
			this.fencingToken = fencingToken;
			this.lastToken = lastToken;
			this.fair = fair;
		}

		@Override
		public long lastToken() {
			return this.lastToken;
		}

		/** Read from the release script's reply: whether the lock was marked. */
		@Override
		public boolean releasedToWaiters() {
			return this.releasedToWaiters;
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
		public boolean renew(Duration leaseTime) {
			return call(LockScripts.RENEW, "renew", this.owner, millis(leaseTime)) == 1;
		}

		@Override
		public String redisKey() {
			return this.lockKey;
		}

		@Override
		public RedisScript<?> renewAllScript() {
			return LockScripts.RENEW_ALL;
		}

		@Override
		public String[] renewArgs(Duration leaseTime) {
			return new String[] { this.owner, millis(leaseTime) };
		}

		@Override
		public boolean stillHeld() {
			return call(LockScripts.HELD, "check", this.owner) == 1;
		}

		@Override
		public boolean release() {
			if (this.fair) {
				long fairResult = releaseFair();
				if (fairResult == LockScripts.RELEASED_UNSIGNALLED) {
					signalRefused(this.key, this.lockKey);
					return true;
				}
				return fairResult == 1;
			}
			String[] publish = publishArgs(this.lockKey, this.owner);
			long result = call(LockScripts.RELEASE, "release", publish[0], publish[1], publish[2], "1");
			if (result == LockScripts.RELEASED_UNSIGNALLED) {
				signalRefused(this.key, this.lockKey);
			}
			this.releasedToWaiters = (result == LockScripts.RELEASED_UNSIGNALLED
					|| result == LockScripts.RELEASED_TO_WAITERS);
			return result == 1 || this.releasedToWaiters;
		}

		/** Deletes the lock, or grants it to the first queued waiter. */
		private long releaseFair() {
			RedisKeys keys = RedisLockProvider.this.keys;
			return call(
					LockScripts.FAIR_RELEASE, "release", RedisCalls.args(this.lockKey, keys.fenceKey(this.lockKey),
							keys.queueKey(this.lockKey), keys.waiterDeadlinesKey(this.lockKey)),
					publishArgs(this.lockKey, this.owner));
		}

		private long call(RedisScript<Long> script, String operation, String... args) {
			return call(script, operation, RedisCalls.args(this.lockKey), args);
		}

		private long call(RedisScript<Long> script, String operation, byte[][] keys, String... args) {
			RedisCalls calls = RedisLockProvider.this.calls;
			Long result = calls.call(this.key, operation, script, ScriptOutputType.INTEGER, calls.deadline(), keys,
					RedisCalls.args(args));
			if (result == null) {
				throw new LockBackendException(this.key,
						"Redis returned no reply to " + operation + " lock '" + this.key + "'",
						new IllegalStateException("null script result"));
			}
			return result;
		}

		@Override
		public String toString() {
			return "RedisLockHandle[" + this.lockKey + ", owner=" + this.owner + ", token=" + this.fencingToken + "]";
		}

	}

}
