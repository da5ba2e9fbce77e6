package dev.distlock.redis;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Plain locks and token blocks in Redis: one acquire script call (one round trip) under a
 * fresh owner token ({@code <instance uuid>:<sequence>}), unique per JVM instance and per
 * acquisition, so a handle whose lease expired cannot delete or renew the lock that a
 * later acquisition took, even one by the same thread. The lock is held by a
 * {@link RedisLockHandle}; a failed acquire is undone by its owner token.
 *
 * <p>
 * With the failover guard on ({@code wait-for-replicas}), the acquire goes through the
 * {@link ReplicaGuard}, and a block is a single token.
 */
final class RedisMutexes {

	private static final Log logger = LogFactory.getLog(RedisMutexes.class);

	private final RedisCalls calls;

	private final RedisKeys keys;

	private final RedisReleaseSignals signals;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final int waitForReplicas;

	/** The failover guard's acquire; null when the guard is off. */
	private final @Nullable ReplicaGuard replicaGuard;

	private final AtomicBoolean signalRefusalReported = new AtomicBoolean();

	RedisMutexes(RedisConnectionFactory connectionFactory, RedisCalls calls, RedisKeys keys,
			RedisReleaseSignals signals, int waitForReplicas, Duration replicaTimeout) {
		this.calls = calls;
		this.keys = keys;
		this.signals = signals;
		this.waitForReplicas = waitForReplicas;
		this.replicaGuard = (waitForReplicas > 0) ? new ReplicaGuard(connectionFactory, keys, signals, calls,
				waitForReplicas, replicaTimeout, this::abandon) : null;
	}

	RedisCalls calls() {
		return this.calls;
	}

	RedisKeys keys() {
		return this.keys;
	}

	/** The handle of a lock taken under {@code owner} by a script of this provider. */
	RedisLockHandle handle(String key, String lockKey, String owner, long fencingToken) {
		return new RedisLockHandle(this, key, lockKey, owner, fencingToken, fencingToken, false);
	}

	/**
	 * The handle of a block of tokens, from {@code fencingToken} to {@code lastToken}.
	 */
	RedisLockHandle handle(String key, String lockKey, String owner, long fencingToken, long lastToken) {
		return new RedisLockHandle(this, key, lockKey, owner, fencingToken, lastToken, false);
	}

	/** A fresh owner token: unique to this provider instance and this acquisition. */
	String newOwner() {
		return this.instanceId + ":" + this.sequence.incrementAndGet();
	}

	CompletableFuture<LockAttempt> tryLock(String key, Duration leaseTime, boolean waiting) {
		return tryLockBlock(key, leaseTime, waiting, 1);
	}

	/**
	 * The acquire script moves the slot's fencing counter past the block ({@code INCRBY})
	 * in the same call, one more command than a plain acquire. With the failover guard on
	 * ({@code wait-for-replicas}), the block is a single token, so such a lock is never
	 * handed over locally.
	 */
	CompletableFuture<LockAttempt> tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		String waitingFlag = waiting ? "1" : "0";
		if (tokens > 1 && this.waitForReplicas == 0) {
			return attempt(key, newOwner(), tokens,
					(lockKey, owner, deadline) -> this.calls.<Long>callAsync(key, "acquire", LockScripts.ACQUIRE,
							ScriptOutputType.INTEGER, deadline, RedisCalls.args(lockKey, this.keys.fenceKey(lockKey)),
							RedisCalls.args(owner, millis(leaseTime), waitingFlag, Integer.toString(tokens))),
					false);
		}
		return attempt(key, newOwner(),
				(lockKey, owner, deadline) -> (this.waitForReplicas > 0)
						? guard().acquire(key, lockKey, owner, millis(leaseTime), waitingFlag, deadline)
						: this.calls.<Long>callAsync(key, "acquire", LockScripts.ACQUIRE, ScriptOutputType.INTEGER,
								deadline, RedisCalls.args(lockKey, this.keys.fenceKey(lockKey)),
								RedisCalls.args(owner, millis(leaseTime), waitingFlag)));
	}

	/**
	 * The same acquire script as {@link #tryLockBlock(String, Duration, boolean, int)},
	 * given the intents' key and the writer: behind readers it records the intent with
	 * the commands {@link RedisFamily#tryLockExclusive} uses, so a free key or a key held
	 * by another writer costs no command more. With the replica guard on, the guarded
	 * acquire without an intent, as the write lock then takes.
	 */
	CompletableFuture<LockAttempt> tryLockBlock(String key, Duration leaseTime, int tokens, String waiterId,
			Duration intentTimeout) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		if (this.waitForReplicas > 0) {
			return tryLockBlock(key, leaseTime, true, tokens);
		}
		return attempt(key, newOwner(), tokens, (lockKey, owner, deadline) -> this.calls.<Long>callAsync(key, "acquire",
				LockScripts.ACQUIRE, ScriptOutputType.INTEGER, deadline,
				RedisCalls.args(lockKey, this.keys.fenceKey(lockKey), this.keys.intentsKey(lockKey)), RedisCalls
					.args(owner, millis(leaseTime), "1", Integer.toString(tokens), waiterId, millis(intentTimeout))),
				false);
	}

	/**
	 * One acquire script call under a fresh owner token, answered without waiting for
	 * Redis; a failed call (whose lock may have been taken, or may still be taken when a
	 * queued command runs late) is undone by that token.
	 */
	private CompletableFuture<LockAttempt> attempt(String key, String owner, AcquireCall call) {
		return attempt(key, owner, 1, call, false);
	}

	CompletableFuture<LockAttempt> attempt(String key, String owner, AcquireCall call, boolean fair) {
		return attempt(key, owner, 1, call, fair);
	}

	private CompletableFuture<LockAttempt> attempt(String key, String owner, int tokens, AcquireCall call,
			boolean fair) {
		String lockKey = this.keys.lockKey(key);
		CompletableFuture<@Nullable Long> reply;
		try {
			reply = call.run(lockKey, owner, this.calls.deadline());
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		return RedisCalls.answer(reply, (result) -> outcome(key, lockKey, owner, tokens, fair, result),
				(failure) -> RedisCalls.undoIfSent(failure, () -> abandon(key, lockKey, owner)));
	}

	private LockAttempt outcome(String key, String lockKey, String owner, int tokens, boolean fair,
			@Nullable Long result) {
		if (result == null) {
			throw new LockBackendException(key, "Redis returned no reply to acquire lock '" + key + "'",
					new IllegalStateException("null script result"));
		}
		long token = LockScripts.grantedToken(result);
		if (token > 0) {
			return new LockAttempt.Acquired(new RedisLockHandle(this, key, lockKey, owner, token,
					LockScripts.grantedLastToken(result, tokens), fair));
		}
		return new LockAttempt.Busy(Duration.ofMillis(-result - 1));
	}

	@FunctionalInterface
	interface AcquireCall {

		/** The reply, bounded by {@code deadlineNanos}; sent without waiting for it. */
		CompletableFuture<@Nullable Long> run(String lockKey, String owner, long deadlineNanos);

	}

	private ReplicaGuard guard() {
		ReplicaGuard guard = this.replicaGuard;
		if (guard == null) {
			throw new IllegalStateException("The replica guard is off");
		}
		return guard;
	}

	/**
	 * Redis refused to {@code PUBLISH} a release signal (an ACL user without the right to
	 * publish to the channel). The release itself happened; waiters in other JVMs find
	 * the lock free at their retry interval instead of at once. Said once, as a warning,
	 * since it repeats on every contended release until the ACL is changed.
	 */
	void signalRefused(String key, String lockKey) {
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
	String[] publishArgs(String lockKey, String first) {
		String[] publish = this.signals.publishArgs(lockKey);
		return new String[] { first, publish[0], publish[1] };
	}

	static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	/** Closes the replica guard, if on. */
	void close() {
		if (this.replicaGuard != null) {
			this.replicaGuard.close();
		}
	}

}
