package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import dev.distlock.LockBackendException;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.ReleaseSignals;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Read-write locks and semaphores on Redis, for {@link RedisLockProvider}: the calls of
 * {@link RwSemaphoreScripts}, their handles (renewed in batches with the plain locks, by
 * {@link SlotBatchRenewal}) and the semaphores' release signals. Every call is one script
 * call, bounded by the store timeout.
 */
final class RedisFamily {

	private static final Log logger = LogFactory.getLog(RedisFamily.class);

	private final RedisKeys keys;

	private final RedisCalls calls;

	private final RedisReleaseSignals signals;

	private final Supplier<String> owners;

	private final Consumer<String> signalRefused;

	private final ReleaseSignals permitSignals;

	/**
	 * @param owners a fresh owner token per acquisition
	 * @param signalRefused told the key whose release Redis refused to publish
	 */
	RedisFamily(RedisKeys keys, RedisCalls calls, RedisReleaseSignals signals, Supplier<String> owners,
			Consumer<String> signalRefused) {
		this.keys = keys;
		this.calls = calls;
		this.signals = signals;
		this.owners = owners;
		this.signalRefused = signalRefused;
		this.permitSignals = new ReleaseSignals() {

			@Override
			public Subscription subscribe(String key, Runnable onRelease) {
				return signals.subscribe(semaphoreKey(key), onRelease);
			}

			@Override
			public boolean isListening() {
				return signals.isListening();
			}

			@Override
			public boolean isListening(String key) {
				return signals.isListening(semaphoreKey(key));
			}

		};
	}

	ReleaseSignals permitSignals() {
		return this.permitSignals;
	}

	private String semaphoreKey(String key) {
		return this.keys.permitsKey(this.keys.lockKey(key));
	}

	/** Answered without waiting for Redis, as every acquire here. */
	CompletableFuture<LockAttempt> tryLockShared(String key, Duration leaseTime, boolean waiting) {
		String lockKey = this.keys.lockKey(key);
		String owner = this.owners.get();
		return acquire(key, Kind.READ, lockKey, owner, RwSemaphoreScripts.READ_ACQUIRE,
				RedisCalls.args(lockKey, this.keys.fenceKey(lockKey), this.keys.intentsKey(lockKey)),
				RedisCalls.args(owner, millis(leaseTime), waiting ? "1" : "0"),
				(result) -> (result > 0)
						? new LockAttempt.Acquired(new FamilyHandle(Kind.READ, key, lockKey, owner, result))
						: new LockAttempt.Busy(Duration.ofMillis(-result - 1)));
	}

	/**
	 * The writer's acquire, returning the mutex's own handle (made by {@code handles}),
	 * since the write side is the mutex.
	 */
	CompletableFuture<LockAttempt> tryLockExclusive(String key, Duration leaseTime, String waiterId,
			Duration intentTimeout, boolean intentRecorded, MutexHandles handles) {
		return tryLockExclusive(key, leaseTime, waiterId, intentTimeout, intentRecorded, 1, handles);
	}

	/**
	 * As above, reserving a block of {@code tokens} fencing tokens with the lock it takes
	 * (the handle is made for the block's first token).
	 */
	CompletableFuture<LockAttempt> tryLockExclusive(String key, Duration leaseTime, String waiterId,
			Duration intentTimeout, boolean intentRecorded, int tokens, MutexHandles handles) {
		String lockKey = this.keys.lockKey(key);
		String owner = this.owners.get();
		return acquire(key, Kind.WRITE, lockKey, owner, RwSemaphoreScripts.WRITE_ACQUIRE,
				RedisCalls.args(lockKey, this.keys.fenceKey(lockKey), this.keys.intentsKey(lockKey)),
				RedisCalls.args(owner, millis(leaseTime), waiterId, millis(intentTimeout), intentRecorded ? "1" : "0",
						Integer.toString(tokens)),
				(result) -> {
					long token = LockScripts.grantedToken(result);
					if (token > 0) {
						return new LockAttempt.Acquired(handles.handle(key, lockKey, owner, token,
								LockScripts.grantedLastToken(result, tokens)));
					}
					return new LockAttempt.Busy(Duration.ofMillis(-result - 1));
				});
	}

	void withdrawIntent(String key, String waiterId) {
		String lockKey = this.keys.lockKey(key);
		String[] publish = this.signals.publishArgs(lockKey);
		this.calls.<Long>call(key, "withdraw the writer's intent on", RwSemaphoreScripts.WITHDRAW_INTENT,
				ScriptOutputType.INTEGER, this.calls.deadline(),
				RedisCalls.args(lockKey, this.keys.intentsKey(lockKey)),
				RedisCalls.args(waiterId, publish[0], publish[1]));
	}

	CompletableFuture<LockAttempt> tryAcquirePermit(String key, int permits, Duration leaseTime, boolean waiting) {
		if (permits <= 0) {
			throw new IllegalArgumentException("permits must be positive but was " + permits);
		}
		String lockKey = this.keys.lockKey(key);
		String semaphore = this.keys.permitsKey(lockKey);
		String owner = this.owners.get();
		CompletableFuture<List<Object>> reply = this.calls.callAsync(key, "take a permit of",
				RwSemaphoreScripts.PERMIT_ACQUIRE, ScriptOutputType.MULTI, this.calls.deadline(),
				RedisCalls.args(semaphore, this.keys.fenceKey(lockKey)),
				RedisCalls.args(owner, Integer.toString(permits), millis(leaseTime), waiting ? "1" : "0"));
		return RedisCalls.answer(reply, (permit) -> permitOutcome(key, semaphore, owner, permits, permit),
				(failure) -> RedisCalls.undoIfSent(failure,
						() -> abandon(new FamilyHandle(Kind.PERMIT, key, semaphore, owner, 0))));
	}

	private LockAttempt permitOutcome(String key, String semaphore, String owner, int permits,
			@Nullable List<Object> reply) {
		if (reply == null || reply.size() != 2) {
			throw new LockBackendException(key,
					"Redis returned no usable reply to take a permit of semaphore '" + key + "': " + reply,
					new IllegalStateException("unexpected script result"));
		}
		long status = ((Number) reply.get(0)).longValue();
		long value = ((Number) reply.get(1)).longValue();
		if (status == 1) {
			return new LockAttempt.Acquired(new FamilyHandle(Kind.PERMIT, key, semaphore, owner, value));
		}
		if (status == 2) {
			throw new PermitCountMismatchException(key, (int) value, permits);
		}
		return new LockAttempt.Busy(Duration.ofMillis(value));
	}

	/**
	 * One acquire script call, answered by {@code outcome} of its reply; a failed call
	 * (which may have taken the hold, or may still take it when a queued command runs
	 * late) is undone by its owner token.
	 */
	private CompletableFuture<LockAttempt> acquire(String key, Kind kind, String lockKey, String owner,
			RedisScript<Long> script, byte[][] scriptKeys, byte[][] args, LongFunction<LockAttempt> outcome) {
		CompletableFuture<@Nullable Long> reply = this.calls.callAsync(key,
				(kind == Kind.READ) ? "read-lock" : "write-lock", script, ScriptOutputType.INTEGER,
				this.calls.deadline(), scriptKeys, args);
		Runnable undo = (kind == Kind.READ) ? () -> abandon(new FamilyHandle(kind, key, lockKey, owner, 0))
				: () -> abandonMutex(key, lockKey, owner);
		return RedisCalls.answer(reply, (result) -> {
			if (result == null) {
				throw new LockBackendException(key, "Redis returned no reply to acquire lock '" + key + "'",
						new IllegalStateException("null script result"));
			}
			return outcome.apply(result);
		}, (failure) -> RedisCalls.undoIfSent(failure, undo));
	}

	/**
	 * Sent without waiting, not even for a connection: the caller already has its answer,
	 * and without a connection the acquire was never sent.
	 */
	private void abandon(FamilyHandle handle) {
		try {
			handle.send(System.nanoTime()).whenComplete((result, failure) -> {
				if (failure != null && logger.isDebugEnabled()) {
					logger.debug("Could not clean up after a failed acquire of '" + handle.key
							+ "'; it expires after its lease if it was taken", failure);
				}
			});
		}
		catch (RuntimeException ex) {
			logger.debug("Could not clean up after a failed acquire of '" + handle.key + "'", ex);
		}
	}

	private void abandonMutex(String key, String lockKey, String owner) {
		try {
			String[] publish = this.signals.publishArgs(lockKey);
			this.calls.send(key, "clean up", LockScripts.RELEASE, ScriptOutputType.INTEGER, System.nanoTime(),
					RedisCalls.args(lockKey), RedisCalls.args(owner, publish[0], publish[1]));
		}
		catch (RuntimeException ex) {
			logger.debug("Could not clean up after a failed acquire of lock '" + key + "'", ex);
		}
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	/**
	 * Makes the mutex's handle for a write lock taken by {@link RwSemaphoreScripts}, with
	 * its token and the last token of its block (the same for a single token).
	 */
	@FunctionalInterface
	interface MutexHandles {

		LockHandle handle(String key, String lockKey, String owner, long token, long lastToken);

	}

	enum Kind {

		READ, WRITE, PERMIT

	}

	/** A read hold or a permit: its own owner, token and Redis key. */
	final class FamilyHandle implements SlotBatchRenewal.Renewable {

		final Kind kind;

		final String key;

		final String redisKey;

		final String owner;

		private final long fencingToken;

		FamilyHandle(Kind kind, String key, String redisKey, String owner, long fencingToken) {
			this.kind = kind;
			this.key = key;
			this.redisKey = redisKey;
			this.owner = owner;
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
		public String redisKey() {
			return this.redisKey;
		}

		@Override
		public RedisScript<?> renewAllScript() {
			return RwSemaphoreScripts.RENEW_ALL;
		}

		@Override
		public String[] renewArgs(Duration leaseTime) {
			return new String[] { (this.kind == Kind.READ) ? "r" : "p", this.owner, millis(leaseTime) };
		}

		@Override
		public boolean renew(Duration leaseTime) {
			List<Object> renewed = RedisFamily.this.calls.call(this.key, "renew", RwSemaphoreScripts.RENEW_ALL,
					ScriptOutputType.MULTI, RedisFamily.this.calls.deadline(), RedisCalls.args(this.redisKey),
					RedisCalls.args(renewArgs(leaseTime)));
			return renewed != null && ((Number) renewed.get(0)).longValue() == 1;
		}

		@Override
		public boolean release() {
			long deadline = RedisFamily.this.calls.deadline();
			Long result = RedisFamily.this.calls.await(this.key, "release", send(deadline), deadline);
			if (result == null) {
				throw new LockBackendException(this.key, "Redis returned no reply to release '" + this.key + "'",
						new IllegalStateException("null script result"));
			}
			if (result == LockScripts.RELEASED_UNSIGNALLED) {
				RedisFamily.this.signalRefused.accept(this.key);
				return true;
			}
			return result == 1;
		}

		CompletableFuture<@Nullable Long> send(long deadlineNanos) {
			String[] publish = RedisFamily.this.signals.publishArgs(this.redisKey);
			return RedisFamily.this.calls.send(this.key, "release",
					(this.kind == Kind.READ) ? RwSemaphoreScripts.READ_RELEASE : RwSemaphoreScripts.PERMIT_RELEASE,
					ScriptOutputType.INTEGER, deadlineNanos, RedisCalls.args(this.redisKey),
					RedisCalls.args(this.owner, publish[0], publish[1]));
		}

		@Override
		public String toString() {
			return "Redis" + ((this.kind == Kind.READ) ? "ReadHold[" : "Permit[") + this.redisKey + ", owner="
					+ this.owner + ", token=" + this.fencingToken + "]";
		}

	}

}
