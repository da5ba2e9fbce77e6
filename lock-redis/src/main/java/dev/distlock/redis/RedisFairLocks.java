package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import dev.distlock.spi.LockAttempt;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Fair locks in Redis: waiters queue in Redis beside the lock, in the order they first
 * asked, and the release of a fair lock grants it to the first of them
 * ({@link LockScripts#FAIR_ACQUIRE}, {@link LockScripts#FAIR_RELEASE}). A grant received
 * on the release channel ({@link FairGrants}) lets the waiter hold the lock without
 * asking Redis again while the grant is fresh.
 */
final class RedisFairLocks {

	private static final Log logger = LogFactory.getLog(RedisFairLocks.class);

	private final RedisMutexes mutexes;

	private final RedisCalls calls;

	private final RedisKeys keys;

	private final RedisReleaseSignals signals;

	private final FairGrants grants;

	RedisFairLocks(RedisMutexes mutexes, RedisCalls calls, RedisKeys keys, RedisReleaseSignals signals,
			FairGrants grants) {
		this.mutexes = mutexes;
		this.calls = calls;
		this.keys = keys;
		this.signals = signals;
		this.grants = grants;
	}

	/** Answered without waiting for Redis. */
	CompletableFuture<LockAttempt> tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		String lockKey = this.keys.lockKey(key);
		FairGrants.Wait wait = this.grants.waitFor(waiterId, lockKey, this.mutexes::newOwner);
		long granted = wait.freshToken(leaseTime.toNanos() / 2);
		if (granted > 0) {
			// Granted on release, and the grant is fresh: held without asking again. The
			// grant's claim is extended to the lease by a renewal sent now and not waited
			// for; if it comes too late, the next renewal finds the lock lost.
			this.grants.done(waiterId);
			extendGrant(key, lockKey, wait.owner, leaseTime);
			return CompletableFuture.completedFuture(new LockAttempt.Acquired(
					new RedisLockHandle(this.mutexes, key, lockKey, wait.owner, granted, granted, true)));
		}
		CompletableFuture<LockAttempt> attempt = this.mutexes.attempt(key, wait.owner,
				(fairKey, owner, deadline) -> this.calls.<Long>callAsync(key, "acquire", LockScripts.FAIR_ACQUIRE,
						ScriptOutputType.INTEGER, deadline,
						RedisCalls.args(fairKey, this.keys.fenceKey(fairKey), this.keys.queueKey(fairKey),
								this.keys.waiterDeadlinesKey(fairKey)),
						RedisCalls.args(owner, RedisMutexes.millis(leaseTime), waiterId,
								RedisMutexes.millis(queueTimeout))),
				true);
		return RedisCalls.answer(attempt, (outcome) -> {
			if (outcome instanceof LockAttempt.Acquired) {
				this.grants.done(waiterId);
			}
			return outcome;
		}, (failure) -> {
		});
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
						RedisCalls.args(lockKey), RedisCalls.args(owner, RedisMutexes.millis(leaseTime)))
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

	void leaveQueue(String key, String waiterId) {
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

}
