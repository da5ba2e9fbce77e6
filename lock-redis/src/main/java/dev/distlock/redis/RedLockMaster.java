package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

import dev.distlock.LockBackendException;
import io.lettuce.core.ScriptOutputType;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * One independent Redis master of a {@link RedLockProvider}: its connection, and one
 * thread that hands its commands to Lettuce in the order they were sent. That thread is
 * what keeps a master that is down (whose connection must first be made, which can take a
 * whole store timeout) from holding up the commands to the other masters, while the order
 * of commands to this master stays the order of the calls: a release sent after an
 * acquire always runs after it, even when both wait for the connection.
 */
final class RedLockMaster implements AutoCloseable {

	private final String name;

	private final RedisCalls calls;

	private final ExecutorService dispatcher;

	RedLockMaster(String name, RedisConnectionFactory connectionFactory, Duration storeTimeout) {
		this.name = name;
		this.calls = new RedisCalls(connectionFactory, storeTimeout);
		this.calls.connectEarly();
		this.dispatcher = Executors.newSingleThreadExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "distlock-redlock-" + name);
			thread.setDaemon(true);
			return thread;
		});
	}

	/** The master as the user named it, for messages. */
	String name() {
		return this.name;
	}

	/**
	 * Sends {@code script} after every command sent to this master before it; the reply
	 * (or the failure to connect within {@code deadlineNanos}) completes the future.
	 */
	CompletableFuture<Long> send(String key, String operation, RedisScript<Long> script, long deadlineNanos,
			String[] keys, String... args) {
		CompletableFuture<Long> reply = new CompletableFuture<>();
		try {
			this.dispatcher.execute(() -> {
				try {
					this.calls
						.<Long>sendInOrder(key, operation, script, ScriptOutputType.INTEGER, deadlineNanos,
								RedisCalls.args(keys), RedisCalls.args(args))
						.whenComplete((result, failure) -> {
							if (failure != null) {
								reply.completeExceptionally(failure);
							}
							else {
								reply.complete(result);
							}
						});
				}
				catch (RuntimeException ex) {
					reply.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			reply.completeExceptionally(new LockBackendException(key,
					"Cannot " + operation + " lock '" + key + "': the RedLock provider has been closed", ex));
		}
		return reply;
	}

	@Override
	public void close() {
		this.dispatcher.shutdownNow();
		this.calls.close();
	}

	@Override
	public String toString() {
		return this.name;
	}

}
