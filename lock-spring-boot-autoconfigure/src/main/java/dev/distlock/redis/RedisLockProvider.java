package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.ReleaseSignals;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.ClusterSlotHashUtil;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Locks in Redis through Spring Data Redis. Runs its own {@link StringRedisTemplate} over
 * the application's {@link RedisConnectionFactory}, so user serializers never touch lock
 * keys.
 *
 * <p>
 * Each acquisition gets a fresh owner token ({@code <instance uuid>:<sequence>}), unique
 * per JVM instance and per acquisition: a handle whose lease expired cannot delete or
 * renew the lock that a later acquisition took, even one by the same thread. Acquire,
 * renew and release are one script call (one round trip) each.
 */
public final class RedisLockProvider implements LockProvider, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisLockProvider.class);

	private static final int RENEW_BATCH = 2000;

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate redis;

	private final RedisKeys keys;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final int waitForReplicas;

	private final RedisReleaseSignals signals;

	private final ReleaseSignals releaseSignals;

	private final Duration replicaTimeout;

	private final AtomicBoolean signalRefusalReported = new AtomicBoolean();

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
	 * ({@code WAIT}) before it counts; 0 turns the guard off
	 * @param replicaTimeout how long {@code WAIT} may take
	 */
	public RedisLockProvider(RedisConnectionFactory connectionFactory, String keyPrefix, boolean cluster,
			int waitForReplicas, Duration replicaTimeout) {
		if (waitForReplicas < 0) {
			throw new IllegalArgumentException("waitForReplicas must not be negative but was " + waitForReplicas);
		}
		if (waitForReplicas > 0 && (replicaTimeout.isNegative() || replicaTimeout.isZero())) {
			throw new IllegalArgumentException("replicaTimeout must be positive but was " + replicaTimeout);
		}
		this.connectionFactory = connectionFactory;
		this.redis = new StringRedisTemplate(connectionFactory);
		this.keys = new RedisKeys(keyPrefix, cluster);
		this.waitForReplicas = waitForReplicas;
		this.replicaTimeout = replicaTimeout;
		this.signals = new RedisReleaseSignals(connectionFactory, this.keys);
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
	 * One script call per cluster slot and per {@value #RENEW_BATCH} locks (a standalone
	 * server is one slot).
	 */
	@Override
	public boolean[] renewAll(List<LockHandle> handles, List<Duration> leaseTimes) {
		boolean[] renewed = new boolean[handles.size()];
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < handles.size(); i++) {
			RedisLockHandle handle = (RedisLockHandle) handles.get(i);
			int slot = this.keys.isCluster() ? ClusterSlotHashUtil.calculateSlot(handle.lockKey) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(i);
		}
		for (List<Integer> slot : bySlot.values()) {
			for (int from = 0; from < slot.size(); from += RENEW_BATCH) {
				List<Integer> chunk = slot.subList(from, Math.min(slot.size(), from + RENEW_BATCH));
				List<String> lockKeys = new ArrayList<>(chunk.size());
				Object[] args = new Object[chunk.size() * 2];
				for (int j = 0; j < chunk.size(); j++) {
					RedisLockHandle handle = (RedisLockHandle) handles.get(chunk.get(j));
					lockKeys.add(handle.lockKey);
					args[2 * j] = handle.owner;
					args[2 * j + 1] = millis(leaseTimes.get(chunk.get(j)));
				}
				List<?> replies;
				try {
					replies = this.redis.execute(LockScripts.RENEW_ALL, lockKeys, args);
				}
				catch (DataAccessException ex) {
					throw new LockBackendException(handles.get(chunk.get(0)).key(),
							"Redis failed to renew " + chunk.size() + " locks: " + ex.getMessage(), ex);
				}
				for (int j = 0; j < chunk.size(); j++) {
					renewed[chunk.get(j)] = replies != null && ((Number) replies.get(j)).longValue() == 1;
				}
			}
		}
		return renewed;
	}

	/** Stops the release subscription. */
	@Override
	public void close() {
		this.signals.close();
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

	@Override
	public LockAttempt tryLock(String key, Duration leaseTime) {
		return tryLock(key, leaseTime, false);
	}

	@Override
	public LockAttempt tryLock(String key, Duration leaseTime, boolean waiting) {
		String waitingFlag = waiting ? "1" : "0";
		return attempt(key,
				(lockKey, owner) -> (this.waitForReplicas > 0)
						? acquireReplicated(key, lockKey, owner, leaseTime, waitingFlag)
						: run(key, "acquire", () -> this.redis.execute(LockScripts.ACQUIRE,
								List.of(lockKey, this.keys.fenceKey(lockKey)), owner, millis(leaseTime), waitingFlag)));
	}

	@Override
	public LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		if (this.waitForReplicas > 0) {
			throw new UnsupportedOperationException(
					"Fair locks are not available with distributed-lock.wait-for-replicas (lock '" + key + "')");
		}
		return attempt(key,
				(lockKey, owner) -> run(key, "acquire",
						() -> this.redis.execute(LockScripts.FAIR_ACQUIRE,
								List.of(lockKey, this.keys.fenceKey(lockKey), this.keys.queueKey(lockKey),
										this.keys.waiterDeadlinesKey(lockKey)),
								owner, millis(leaseTime), waiterId, millis(queueTimeout))));
	}

	/**
	 * One acquire script call under a fresh owner token; a failed call (whose lock may
	 * have been taken, or taken and found unreplicated) is cleaned up by that token.
	 */
	private LockAttempt attempt(String key, AcquireCall call) {
		String lockKey = this.keys.lockKey(key);
		String owner = this.instanceId + ":" + this.sequence.incrementAndGet();
		long result;
		try {
			result = call.run(lockKey, owner);
		}
		catch (LockBackendException ex) {
			abandon(lockKey, owner, ex);
			throw ex;
		}
		if (result > 0) {
			return new LockAttempt.Acquired(new RedisLockHandle(key, lockKey, owner, result));
		}
		return new LockAttempt.Busy(Duration.ofMillis(-result - 1));
	}

	@FunctionalInterface
	private interface AcquireCall {

		long run(String lockKey, String owner);

	}

	@Override
	public void leaveQueue(String key, String waiterId) {
		String lockKey = this.keys.lockKey(key);
		run(key, "leave the queue of",
				() -> this.redis.execute(LockScripts.LEAVE_QUEUE,
						List.of(lockKey, this.keys.queueKey(lockKey), this.keys.waiterDeadlinesKey(lockKey)),
						(Object[]) publishArgs(lockKey, waiterId)));
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
	 * The acquire script and {@code WAIT} in one pipeline on a connection of its own:
	 * {@code WAIT} counts the replicas that acknowledged this connection's writes, and it
	 * blocks its connection, which must not be the one the application shares. A lock
	 * that too few replicas acknowledged is released on that same connection (so the
	 * release cannot overtake the acquire) and reported: a failover now could hand it to
	 * a second holder.
	 */
	private long acquireReplicated(String key, String lockKey, String owner, Duration leaseTime, String waiting) {
		byte[][] keysAndArgs = { bytes(lockKey), bytes(this.keys.fenceKey(lockKey)), bytes(owner),
				bytes(millis(leaseTime)), bytes(waiting) };
		byte[][] waitArgs = { bytes(Integer.toString(this.waitForReplicas)),
				bytes(Long.toString(Math.max(1, this.replicaTimeout.toMillis()))) };
		RedisConnection connection = this.connectionFactory.getConnection();
		try {
			List<Object> replies;
			try {
				connection.openPipeline();
				connection.scriptingCommands()
					.eval(bytes(LockScripts.ACQUIRE.getScriptAsString()), ReturnType.INTEGER, 2, keysAndArgs);
				if (connection instanceof LettuceConnection lettuce) {
					// Lettuce needs to be told that the reply is an integer.
					lettuce.execute("WAIT", new IntegerOutput<>(ByteArrayCodec.INSTANCE), waitArgs);
				}
				else {
					connection.execute("WAIT", waitArgs);
				}
				replies = connection.closePipeline();
			}
			catch (DataAccessException ex) {
				LockBackendException failure = new LockBackendException(key,
						"Redis failed to acquire lock '" + key + "': " + ex.getMessage(), ex);
				releaseOn(connection, lockKey, owner, failure);
				throw failure;
			}
			long result = ((Number) replies.get(0)).longValue();
			long acknowledged = ((Number) replies.get(1)).longValue();
			if (result > 0 && acknowledged < this.waitForReplicas) {
				LockBackendException failure = new LockBackendException(key, "Lock '" + key + "' was acquired on"
						+ " the master, but only " + acknowledged + " of " + this.waitForReplicas + " replicas"
						+ " acknowledged it within " + this.replicaTimeout.toMillis() + "ms"
						+ " (distributed-lock.wait-for-replicas); it is released, since a failover now could give"
						+ " it to a second holder", new IllegalStateException("WAIT returned " + acknowledged));
				releaseOn(connection, lockKey, owner, failure);
				throw failure;
			}
			return result;
		}
		finally {
			connection.close();
		}
	}

	/**
	 * Releases by owner token on the connection the acquire went out on. If that
	 * connection is broken, {@link #abandon} tries again on the shared one.
	 */
	private void releaseOn(RedisConnection connection, String lockKey, String owner, LockBackendException failure) {
		boolean interrupted = Thread.interrupted();
		try {
			if (connection.isPipelined()) {
				connection.closePipeline();
			}
			String[] publish = this.signals.publishArgs(lockKey);
			connection.scriptingCommands()
				.eval(bytes(LockScripts.RELEASE.getScriptAsString()), ReturnType.INTEGER, 1, bytes(lockKey),
						bytes(owner), bytes(publish[0]), bytes(publish[1]));
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * The acquire reply was lost (interrupt, timeout, broken connection), but the script
	 * may have run and taken the lock for an owner nobody knows. Deletes it if so, so
	 * that it does not block every caller for a whole lease. The owner is unique to this
	 * attempt, so nothing else can be deleted; on a shared connection the delete is sent
	 * after the acquire and runs after it. The interrupt flag is set aside for this one
	 * call.
	 */
	private void abandon(String lockKey, String owner, LockBackendException failure) {
		boolean interrupted = Thread.interrupted();
		try {
			this.redis.execute(LockScripts.RELEASE, List.of(lockKey), (Object[]) publishArgs(lockKey, owner));
		}
		catch (RuntimeException ex) {
			failure.addSuppressed(ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
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

	private static long run(String key, String operation, Supplier<@Nullable Long> call) {
		Long result;
		try {
			result = call.get();
		}
		catch (DataAccessException ex) {
			throw new LockBackendException(key, "Redis failed to " + operation + " lock '" + key + "': "
					+ NestedExceptionUtils.getMostSpecificCause(ex).getMessage(), ex);
		}
		if (result == null) {
			throw new LockBackendException(key, "Redis returned no reply to " + operation + " lock '" + key + "'",
					new IllegalStateException("null script result"));
		}
		return result;
	}

	private final class RedisLockHandle implements LockHandle {

		private final String key;

		private final String lockKey;

		private final String owner;

		private final long fencingToken;

		RedisLockHandle(String key, String lockKey, String owner, long fencingToken) {
			this.key = key;
			this.lockKey = lockKey;
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
		public boolean renew(Duration leaseTime) {
			return call(LockScripts.RENEW, "renew", this.owner, millis(leaseTime)) == 1;
		}

		@Override
		public boolean release() {
			long result = call(LockScripts.RELEASE, "release", publishArgs(this.lockKey, this.owner));
			if (result == LockScripts.RELEASED_UNSIGNALLED) {
				signalRefused(this.key, this.lockKey);
				return true;
			}
			return result == 1;
		}

		private long call(RedisScript<Long> script, String operation, String... args) {
			return run(this.key, operation,
					() -> RedisLockProvider.this.redis.execute(script, List.of(this.lockKey), (Object[]) args));
		}

		@Override
		public String toString() {
			return "RedisLockHandle[" + this.lockKey + ", owner=" + this.owner + ", token=" + this.fencingToken + "]";
		}

	}

}
