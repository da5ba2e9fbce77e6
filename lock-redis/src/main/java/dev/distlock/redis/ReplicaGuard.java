package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.IntegerOutput;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;

/**
 * The failover guard's acquire ({@code distributed-lock.redis.wait-for-replicas}): the
 * acquire script followed by {@code WAIT}, so that an acquire counts only once enough
 * replicas have it. Runs on a thread of its own, bounded by the caller's deadline like
 * every other call.
 */
final class ReplicaGuard implements AutoCloseable {

	/** Undoes an acquire by its owner token, on the shared connection. */
	@FunctionalInterface
	interface Undo {

		void abandon(String key, String lockKey, String owner);

	}

	private final RedisConnectionFactory connectionFactory;

	private final RedisKeys keys;

	private final RedisReleaseSignals signals;

	private final RedisCalls calls;

	private final int waitForReplicas;

	private final Duration replicaTimeout;

	private final Undo undo;

	/** Runs the guarded acquire, which blocks its own connection on WAIT. */
	private final ExecutorService executor = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "distlock-redis-wait");
		thread.setDaemon(true);
		return thread;
	});

	ReplicaGuard(RedisConnectionFactory connectionFactory, RedisKeys keys, RedisReleaseSignals signals,
			RedisCalls calls, int waitForReplicas, Duration replicaTimeout, Undo undo) {
		this.connectionFactory = connectionFactory;
		this.keys = keys;
		this.signals = signals;
		this.calls = calls;
		this.waitForReplicas = waitForReplicas;
		this.replicaTimeout = replicaTimeout;
		this.undo = undo;
	}

	/**
	 * The acquire script and {@code WAIT}, run on a thread of their own, answered by the
	 * deadline without the caller waiting: {@code WAIT} needs a connection of its own and
	 * the synchronous API, whose timeout is the client's. When the deadline passes first,
	 * the lock is undone once the pipeline is over.
	 */
	CompletableFuture<Long> acquire(String key, String lockKey, String owner, String leaseMillis, String waiting,
			long deadline) {
		CompletableFuture<Long> acquired;
		try {
			acquired = CompletableFuture.supplyAsync(() -> pipeline(key, lockKey, owner, leaseMillis, waiting),
					this.executor);
		}
		catch (RejectedExecutionException ex) {
			return CompletableFuture.failedFuture(new LockBackendException(key,
					"Cannot acquire lock '" + key + "': the provider has been closed", ex));
		}
		CompletableFuture<Long> answer = this.calls.within(key, "acquire", acquired, deadline);
		answer.whenComplete((result, failure) -> {
			if (failure != null) {
				acquired.whenComplete((late, lateFailure) -> this.undo.abandon(key, lockKey, owner));
			}
		});
		return answer;
	}

	/**
	 * The acquire script and {@code WAIT} in one pipeline on a connection of its own:
	 * {@code WAIT} counts the replicas that acknowledged this connection's writes, and it
	 * blocks its connection, which must not be the one the application shares. A lock
	 * that too few replicas acknowledged is released on that same connection (so the
	 * release cannot overtake the acquire) and reported: a failover now could hand it to
	 * a second holder.
	 */
	private long pipeline(String key, String lockKey, String owner, String leaseMillis, String waiting) {
		byte[][] keysAndArgs = RedisCalls.args(lockKey, this.keys.fenceKey(lockKey), owner, leaseMillis, waiting);
		byte[][] waitArgs = RedisCalls.args(Integer.toString(this.waitForReplicas),
				Long.toString(Math.max(1, this.replicaTimeout.toMillis())));
		RedisConnection connection = this.connectionFactory.getConnection();
		try {
			List<Object> replies;
			try {
				connection.openPipeline();
				connection.scriptingCommands()
					.eval(RedisCalls.bytes(LockScripts.ACQUIRE.getScriptAsString()), ReturnType.INTEGER, 2,
							keysAndArgs);
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
				LockBackendException failure = RedisCalls.failed(key, "acquire", ex);
				releaseOn(connection, lockKey, owner, failure);
				throw failure;
			}
			long result = ((Number) replies.get(0)).longValue();
			long acknowledged = ((Number) replies.get(1)).longValue();
			if (result > 0 && acknowledged < this.waitForReplicas) {
				LockBackendException failure = new LockBackendException(key, "Lock '" + key + "' was acquired on"
						+ " the master, but only " + acknowledged + " of " + this.waitForReplicas + " replicas"
						+ " acknowledged it within " + this.replicaTimeout.toMillis() + "ms"
						+ " (distributed-lock.redis.wait-for-replicas); it is released, since a failover now could give"
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
	 * connection is broken, the provider's clean-up tries again on the shared one.
	 */
	private void releaseOn(RedisConnection connection, String lockKey, String owner, LockBackendException failure) {
		Interrupts.setAside(() -> {
			try {
				if (connection.isPipelined()) {
					connection.closePipeline();
				}
				// Pipelined again, so that it goes out on the connection the acquire
				// used:
				// outside a pipeline Spring Data Redis would send it on the shared one,
				// which after a Sentinel failover can point at another master.
				String[] publish = this.signals.publishArgs(lockKey);
				connection.openPipeline();
				connection.scriptingCommands()
					.eval(RedisCalls.bytes(LockScripts.RELEASE.getScriptAsString()), ReturnType.INTEGER, 1,
							RedisCalls.args(lockKey, owner, publish[0], publish[1]));
				connection.closePipeline();
			}
			catch (RuntimeException ex) {
				failure.addSuppressed(ex);
			}
			return null;
		});
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
