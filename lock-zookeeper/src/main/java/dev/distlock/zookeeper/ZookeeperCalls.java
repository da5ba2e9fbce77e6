package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.LockBackendException;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException;

/**
 * Curator's background operations, each awaited at most until a deadline taken from the
 * store timeout, whatever Curator's own connection and retry timeouts: a caller then gets
 * a {@link LockBackendException}. An operation given up on may still complete later;
 * callers that must not leave its effect behind attach an undo to its reply (see
 * {@link ZookeeperLockProvider}).
 */
final class ZookeeperCalls {

	private final Duration timeout;

	/** Starts one Curator operation in the background, answering {@code callback}. */
	@FunctionalInterface
	interface Operation {

		void start(BackgroundCallback callback) throws Exception;

	}

	ZookeeperCalls(Duration timeout) {
		this.timeout = timeout;
	}

	Duration timeout() {
		return this.timeout;
	}

	/** A fresh deadline for one call. */
	long deadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/** Sends {@code operation}; its reply completes the future. */
	CompletableFuture<CuratorEvent> send(Operation operation) {
		CompletableFuture<CuratorEvent> reply = new CompletableFuture<>();
		try {
			operation.start((client, event) -> reply.complete(event));
		}
		catch (Exception ex) {
			reply.completeExceptionally(ex);
		}
		return reply;
	}

	/**
	 * Waits for a reply until {@code deadlineNanos}.
	 * @param key the lock key the user gave, for messages
	 * @param operation what the call does, for messages ("acquire", "release")
	 */
	<T> T await(String key, String operation, CompletableFuture<T> reply, long deadlineNanos) {
		try {
			return reply.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw timedOut(key, operation, ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new LockBackendException(key,
					"ZooKeeper failed to " + operation + " lock '" + key + "': " + cause.getMessage(), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockBackendException(key,
					"Interrupted while waiting for ZooKeeper to " + operation + " lock '" + key + "'", ex);
		}
	}

	/** The failure of a call not answered within the store timeout. */
	LockBackendException timedOut(String key, String operation, Throwable cause) {
		return new LockBackendException(key, "ZooKeeper did not answer within " + this.timeout.toMillis()
				+ "ms (distributed-lock.store-timeout) to " + operation + " lock '" + key + "'", cause);
	}

	/** Sends {@code operation} and waits for its reply until {@code deadlineNanos}. */
	CuratorEvent call(String key, String operation, long deadlineNanos, Operation op) {
		return await(key, operation, send(op), deadlineNanos);
	}

	/** The reply's result code. */
	static KeeperException.Code code(CuratorEvent event) {
		return KeeperException.Code.get(event.getResultCode());
	}

	/** A failure for a reply whose result code no caller expects. */
	static LockBackendException failed(String key, String operation, CuratorEvent event) {
		KeeperException cause = KeeperException.create(code(event), event.getPath());
		return new LockBackendException(key,
				"ZooKeeper failed to " + operation + " lock '" + key + "': " + cause.getMessage(), cause);
	}

}
