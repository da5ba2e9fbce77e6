package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import dev.distlock.LockBackendException;
import dev.distlock.spi.TokenBlock;
import io.lettuce.core.ScriptOutputType;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * A plain or fair lock held in Redis under its owner token: renew, check and release are
 * one owner-checked script call each, so a handle whose lease expired cannot touch a
 * later holder's lock. A fair lock's release grants the lock to the first queued waiter.
 */
final class RedisLockHandle implements TokenBlock, SlotBatchRenewal.Renewable {

	private final RedisMutexes mutexes;

	private final String key;

	final String lockKey;

	final String owner;

	private final long fencingToken;

	private final long lastToken;

	private volatile boolean releasedToWaiters;

	/** Whether the lock is fair: its release grants it to the next queued waiter. */
	private final boolean fair;

	RedisLockHandle(RedisMutexes mutexes, String key, String lockKey, String owner, long fencingToken, long lastToken,
			boolean fair) {
		this.mutexes = mutexes;
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
		return call(LockScripts.RENEW, "renew", this.owner, RedisMutexes.millis(leaseTime)) == 1;
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
		return new String[] { this.owner, RedisMutexes.millis(leaseTime) };
	}

	@Override
	public boolean stillHeld() {
		return call(LockScripts.HELD, "check", this.owner) == 1;
	}

	@Override
	public boolean release() {
		if (this.fair) {
			return released(releaseFair());
		}
		return released(call(LockScripts.RELEASE, "release", RedisCalls.args(this.lockKey), releaseArgs()));
	}

	/** One script call, answered on the thread Redis's reply comes in on. */
	@Override
	public CompletionStage<Boolean> releaseAsync(Executor executor) {
		RedisCalls calls = this.mutexes.calls();
		CompletableFuture<@Nullable Long> reply = this.fair
				? calls.callAsync(this.key, "release", LockScripts.FAIR_RELEASE, ScriptOutputType.INTEGER,
						calls.deadline(), fairReleaseKeys(),
						RedisCalls.args(this.mutexes.publishArgs(this.lockKey, this.owner)))
				: calls.callAsync(this.key, "release", LockScripts.RELEASE, ScriptOutputType.INTEGER, calls.deadline(),
						RedisCalls.args(this.lockKey), RedisCalls.args(releaseArgs()));
		return reply.thenApply((result) -> released(nonNull(result, "release")));
	}

	private String[] releaseArgs() {
		String[] publish = this.mutexes.publishArgs(this.lockKey, this.owner);
		return new String[] { publish[0], publish[1], publish[2], "1" };
	}

	/**
	 * What a release script's reply says, this handle's or a release of several keys':
	 * whether the lock was still ours.
	 */
	boolean released(long result) {
		if (result == LockScripts.RELEASED_UNSIGNALLED) {
			this.mutexes.signalRefused(this.key, this.lockKey);
		}
		if (this.fair) {
			return result == 1 || result == LockScripts.RELEASED_UNSIGNALLED;
		}
		this.releasedToWaiters = (result == LockScripts.RELEASED_UNSIGNALLED
				|| result == LockScripts.RELEASED_TO_WAITERS);
		return result == 1 || this.releasedToWaiters;
	}

	/** Deletes the lock, or grants it to the first queued waiter. */
	private long releaseFair() {
		return call(LockScripts.FAIR_RELEASE, "release", fairReleaseKeys(),
				this.mutexes.publishArgs(this.lockKey, this.owner));
	}

	private byte[][] fairReleaseKeys() {
		RedisKeys keys = this.mutexes.keys();
		return RedisCalls.args(this.lockKey, keys.fenceKey(this.lockKey), keys.queueKey(this.lockKey),
				keys.waiterDeadlinesKey(this.lockKey));
	}

	private long call(RedisScript<Long> script, String operation, String... args) {
		return call(script, operation, RedisCalls.args(this.lockKey), args);
	}

	private long call(RedisScript<Long> script, String operation, byte[][] keys, String... args) {
		RedisCalls calls = this.mutexes.calls();
		Long result = calls.call(this.key, operation, script, ScriptOutputType.INTEGER, calls.deadline(), keys,
				RedisCalls.args(args));
		return nonNull(result, operation);
	}

	private long nonNull(@Nullable Long result, String operation) {
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
