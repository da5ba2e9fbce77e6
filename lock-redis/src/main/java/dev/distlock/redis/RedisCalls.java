package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.distlock.LockBackendException;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Script calls on Lettuce's asynchronous API, each bounded by the store timeout whatever
 * the client's own command timeout (Boot's default is 60 s): a caller waits for a reply
 * at most that long and then gets a {@link LockBackendException}; an acquire does not
 * wait at all, its answer failing at the deadline instead ({@link #callAsync}). A command
 * given up on stays queued on its connection and may still run later; callers that must
 * not leave its effect behind send an owner-checked undo at once and again once the
 * command has run ({@link #afterLateReply}). Sending it behind the command on the same
 * connection is not enough: a script Redis has not cached (after a restart or a failover)
 * comes back {@code NOSCRIPT} and is sent again whole, behind an undo sent meanwhile
 * whose own script Redis had cached.
 *
 * <p>
 * The connection comes from the application's {@link RedisConnectionFactory} (its shared
 * native connection, by default), obtained on a background thread so that a Redis that
 * does not answer the handshake cannot block a caller either. Scripts run by SHA, and are
 * sent whole once when Redis answers {@code NOSCRIPT}.
 */
final class RedisCalls implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisCalls.class);

	/** What a call waiting for the connection is said to do, before its operation. */
	private static final String CONNECT = "connect to ";

	private final RedisConnectionFactory connectionFactory;

	private final Duration timeout;

	private final AtomicReference<@Nullable CompletableFuture<Native>> connection = new AtomicReference<>();

	private final ExecutorService connector = Executors.newSingleThreadExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "distlock-redis-connect");
		thread.setDaemon(true);
		return thread;
	});

	private volatile boolean closed;

	private final AtomicBoolean tooOldReported = new AtomicBoolean();

	RedisCalls(RedisConnectionFactory connectionFactory, Duration timeout) {
		this.connectionFactory = connectionFactory;
		this.timeout = timeout;
	}

	/**
	 * Starts connecting in the background, so that the first lock call does not pay for
	 * the client's start-up (event loops, handshake) within its store timeout. A failure
	 * here costs nothing: the next call tries again.
	 */
	void connectEarly() {
		CompletableFuture<Native> connecting = new CompletableFuture<>();
		if (this.connection.compareAndSet(null, connecting)) {
			try {
				this.connector.execute(() -> connect(connecting));
			}
			catch (RuntimeException ex) {
				connecting.completeExceptionally(ex);
			}
		}
	}

	Duration timeout() {
		return this.timeout;
	}

	/** A fresh deadline for one call. */
	long deadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/**
	 * Runs {@code script} and waits for its reply until {@code deadlineNanos}.
	 * @param key the lock key the user gave, for messages
	 * @param operation what the call does, for messages ("acquire", "release")
	 */
	<T> T call(String key, String operation, RedisScript<?> script, ScriptOutputType type, long deadlineNanos,
			byte[][] keys, byte[]... args) {
		return await(key, operation, send(key, operation, script, type, deadlineNanos, keys, args), deadlineNanos);
	}

	/**
	 * Runs {@code script} without waiting for anything, the connection included: the
	 * answer completes with the reply, or fails as {@link #call} throws, at
	 * {@code deadlineNanos} at the latest (see {@link #within}).
	 */
	<T> CompletableFuture<T> callAsync(String key, String operation, RedisScript<?> script, ScriptOutputType type,
			long deadlineNanos, byte[][] keys, byte[]... args) {
		CompletableFuture<T> reply;
		try {
			reply = send(key, operation, script, type, deadlineNanos, keys, args);
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		return within(key, operation, reply, deadlineNanos);
	}

	/**
	 * Sends {@code script} without waiting for its reply, nor for the connection: a
	 * connection not yet established is waited for by the call, not the caller, and the
	 * script is not sent if it comes after {@code deadlineNanos}, by when the caller has
	 * given up.
	 */
	<T> CompletableFuture<T> send(String key, String operation, RedisScript<?> script, ScriptOutputType type,
			long deadlineNanos, byte[][] keys, byte[]... args) {
		CompletableFuture<Native> connecting = connection(key, operation);
		if (connecting.isDone() && !connecting.isCompletedExceptionally()) {
			return evalsha(connecting.join().commands, script, type, keys, args);
		}
		return connecting.handle((established, failure) -> {
			if (failure != null) {
				Throwable cause = unwrap(failure);
				return CompletableFuture.<T>failedFuture((cause instanceof LockBackendException backend) ? backend
						: failed(key, CONNECT + operation, cause));
			}
			if (System.nanoTime() - deadlineNanos > 0) {
				return CompletableFuture.<T>failedFuture(new LockBackendException(key,
						"Redis did not answer within " + this.timeout.toMillis()
								+ "ms (distributed-lock.store-timeout) to connect to " + operation + " lock '" + key
								+ "'",
						new TimeoutException("connected after the deadline")));
			}
			return this.<T>evalsha(established.commands, script, type, keys, args);
		}).thenCompose((stage) -> stage);
	}

	/**
	 * As {@link #send}, but a connection not yet established is waited for on the calling
	 * thread until {@code deadlineNanos}, so that the calls of one thread go out in the
	 * order made even while connecting: calls that each wait for the connection on their
	 * own would be sent in no particular order once it comes.
	 */
	<T> CompletableFuture<T> sendInOrder(String key, String operation, RedisScript<?> script, ScriptOutputType type,
			long deadlineNanos, byte[][] keys, byte[]... args) {
		Native established = await(key, CONNECT + operation, connection(key, operation), deadlineNanos);
		return evalsha(established.commands, script, type, keys, args);
	}

	/** The script by SHA, sent whole once if Redis answers {@code NOSCRIPT}. */
	private <T> CompletableFuture<T> evalsha(RedisClusterAsyncCommands<byte[], byte[]> commands, RedisScript<?> script,
			ScriptOutputType type, byte[][] keys, byte[]... args) {
		CompletionStage<T> bySha = commands.evalsha(script.getSha1(), type, keys, args);
		return bySha.handle((reply, failure) -> {
			if (failure != null && unwrap(failure) instanceof RedisNoScriptException) {
				CompletionStage<T> whole = commands.eval(script.getScriptAsString(), type, keys, args);
				return whole;
			}
			return (failure != null) ? CompletableFuture.<T>failedFuture(unwrap(failure))
					: CompletableFuture.completedFuture(reply);
		}).thenCompose((stage) -> stage).toCompletableFuture();
	}

	/**
	 * {@code reply} bounded by {@code deadlineNanos}, without a thread of its own: the
	 * answer completes with the reply, fails with a {@link LockBackendException} for a
	 * failed reply, and with an {@link UnansweredCallException} (which keeps the reply,
	 * see {@link #afterLateReply}) when the deadline passes first, timed by the JDK's
	 * delayer thread ({@link CompletableFuture#orTimeout}). Whatever completes the answer
	 * runs its continuations: a client I/O thread, or the delayer at the deadline; they
	 * must not block.
	 */
	<T> CompletableFuture<T> within(String key, String operation, CompletableFuture<T> reply, long deadlineNanos) {
		CompletableFuture<T> answer = new CompletableFuture<>();
		reply.whenComplete((value, failure) -> {
			if (failure == null) {
				answer.complete(value);
			}
			else {
				answer.completeExceptionally(backendFailure(key, operation, failure));
			}
		});
		if (!answer.isDone()) {
			CompletableFuture<Void> timer = new CompletableFuture<>();
			timer.orTimeout(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
				.whenComplete((done, late) -> {
					if (late != null) {
						answer.completeExceptionally(unanswered(key, operation, reply, late));
					}
				});
			// Completing the timer cancels its delayed task.
			answer.whenComplete((value, failure) -> timer.complete(null));
		}
		return answer;
	}

	/**
	 * The answer {@code onReply} makes of {@code reply}, completed on the thread that
	 * completes the reply, so {@code onReply} must not block; what it throws fails the
	 * answer. A failed reply fails the answer with its failure as raised (not wrapped),
	 * once {@code onFailure} has run (an undo, which must not block either).
	 */
	static <T, R> CompletableFuture<R> answer(CompletableFuture<T> reply, Function<@Nullable T, R> onReply,
			Consumer<RuntimeException> onFailure) {
		CompletableFuture<R> answer = new CompletableFuture<>();
		reply.whenComplete((value, failure) -> {
			if (failure != null) {
				Throwable cause = unwrap(failure);
				if (cause instanceof RuntimeException runtime) {
					try {
						onFailure.accept(runtime);
					}
					catch (RuntimeException ex) {
						runtime.addSuppressed(ex);
					}
				}
				answer.completeExceptionally(cause);
				return;
			}
			try {
				answer.complete(onReply.apply(value));
			}
			catch (RuntimeException ex) {
				answer.completeExceptionally(ex);
			}
		});
		return answer;
	}

	/**
	 * Runs {@code undo} now and after the late reply ({@link #undoNowAndLate}) when
	 * {@code failure} is the store's: a call that failed or went unanswered may have
	 * taken, or may still take, what the undo gives back. A failure of the caller's
	 * request itself (a bad argument) sent nothing.
	 */
	static void undoIfSent(RuntimeException failure, Runnable undo) {
		if (failure instanceof LockBackendException) {
			undoNowAndLate(failure, undo);
		}
	}

	private LockBackendException backendFailure(String key, String operation, Throwable failure) {
		Throwable cause = unwrap(failure);
		return (cause instanceof LockBackendException backend) ? backend : failed(key, operation, cause);
	}

	private UnansweredCallException unanswered(String key, String operation, CompletableFuture<?> reply,
			Throwable cause) {
		String what = (isConnected() || operation.startsWith(CONNECT)) ? operation : CONNECT + operation;
		return new UnansweredCallException(key, "Redis did not answer within " + this.timeout.toMillis()
				+ "ms (distributed-lock.store-timeout) to " + what + " lock '" + key + "'", cause, reply);
	}

	/** Whether a connection is established (it may have closed since). */
	private boolean isConnected() {
		CompletableFuture<Native> current = this.connection.get();
		return current != null && current.isDone() && !current.isCompletedExceptionally();
	}

	/** Waits for a reply until {@code deadlineNanos}. */
	<T> T await(String key, String operation, CompletableFuture<T> reply, long deadlineNanos) {
		try {
			return reply.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw unanswered(key, operation, reply, ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = unwrap(ex);
			if (cause instanceof LockBackendException backend) {
				throw backend;
			}
			throw failed(key, operation, cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new UnansweredCallException(key,
					"Interrupted while waiting for Redis to " + operation + " lock '" + key + "'", ex, reply);
		}
	}

	/**
	 * Runs {@code undo} once the command of a call given up on ({@code failure} from
	 * {@link #await}: a timeout or an interrupt) has had its reply, that is once the
	 * command, if it runs at all, has run; at once if it already has. Any other failure
	 * needs no later undo: its command failed, or was never sent. The undo runs on the
	 * thread that completes the reply (a client I/O thread), so it must not block.
	 */
	static void afterLateReply(RuntimeException failure, Runnable undo) {
		if (failure instanceof UnansweredCallException unanswered) {
			unanswered.reply.whenComplete((result, late) -> undo.run());
		}
	}

	/**
	 * Runs {@code undo} now, for a command that ran and whose reply was lost, and again
	 * {@link #afterLateReply after the late reply}, for one still queued.
	 */
	static void undoNowAndLate(RuntimeException failure, Runnable undo) {
		undo.run();
		afterLateReply(failure, undo);
	}

	static LockBackendException failed(String key, String operation, Throwable cause) {
		return new LockBackendException(key,
				"Redis failed to " + operation + " lock '" + key + "': " + mostSpecific(cause).getMessage(), cause);
	}

	private static Throwable mostSpecific(Throwable ex) {
		Throwable cause = ex;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static Throwable unwrap(Throwable ex) {
		Throwable current = ex;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

	/**
	 * The connection, established or on its way, connecting first if need be; a
	 * connection closed for good (the factory was reset) is replaced. One that is
	 * reconnecting is kept: Lettuce holds its commands and sends them in order once it is
	 * back, so that an undo sent behind a command still runs after it, where a command on
	 * a replacement could overtake it, or never be sent at all. Never waits.
	 */
	private CompletableFuture<Native> connection(String key, String operation) {
		CompletableFuture<Native> current = this.connection.get();
		if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
			Native established = current.join();
			if (!established.isClosed()) {
				return current;
			}
			this.connection.compareAndSet(current, null);
			established.close();
			current = null;
		}
		if (current == null || current.isCompletedExceptionally()) {
			if (this.closed) {
				throw new LockBackendException(key,
						"Cannot " + operation + " lock '" + key + "': the Redis lock provider has been closed",
						new IllegalStateException("closed"));
			}
			CompletableFuture<Native> connecting = new CompletableFuture<>();
			if (this.connection.compareAndSet(current, connecting)) {
				this.connector.execute(() -> connect(connecting));
			}
			current = this.connection.get();
			if (current == null) {
				return connection(key, operation);
			}
		}
		return current;
	}

	private void connect(CompletableFuture<Native> connecting) {
		try {
			RedisConnection redisConnection = this.connectionFactory.getConnection();
			if (!(redisConnection instanceof LettuceConnection lettuce)) {
				redisConnection.close();
				throw new IllegalStateException("distlock's Redis store needs Lettuce, but the connection factory gave "
						+ redisConnection.getClass().getName());
			}
			Native established = new Native(lettuce, lettuce.getNativeConnection());
			String tooOld = tooOld(established);
			if (tooOld != null) {
				if (this.tooOldReported.compareAndSet(false, true)) {
					logger.error(tooOld);
				}
				established.close();
				throw new IllegalStateException(tooOld);
			}
			connecting.complete(established);
		}
		catch (RuntimeException ex) {
			connecting.completeExceptionally(ex);
		}
	}

	/**
	 * Why the server cannot run distlock's scripts, when {@code INFO server} says it is
	 * older than Redis 6.2 (they use {@code SET ... GET}); null when it is new enough, or
	 * when it does not say (INFO renamed or refused): the scripts then tell.
	 */
	private @Nullable String tooOld(Native established) {
		String info;
		try {
			info = established.commands.info("server").get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		catch (ExecutionException | TimeoutException | RuntimeException ex) {
			return null;
		}
		return ServerVersion.tooOld(info);
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	static byte[][] args(String... values) {
		byte[][] bytes = new byte[values.length][];
		for (int i = 0; i < values.length; i++) {
			bytes[i] = bytes(values[i]);
		}
		return bytes;
	}

	@Override
	public void close() {
		this.closed = true;
		this.connector.shutdownNow();
		CompletableFuture<Native> current = this.connection.getAndSet(null);
		if (current != null && current.isDone() && !current.isCompletedExceptionally()) {
			current.join().close();
		}
	}

	/**
	 * A call whose reply did not come in time, or for which the caller stopped waiting
	 * (an interrupt); its command may still be queued and run later.
	 */
	static final class UnansweredCallException extends LockBackendException {

		private final transient CompletableFuture<?> reply;

		UnansweredCallException(String key, String message, Throwable cause, CompletableFuture<?> reply) {
			super(key, message, cause);
			this.reply = reply;
		}

	}

	/**
	 * A connection of the factory and its asynchronous commands; kept open for the
	 * provider's life, so a pooled factory lends one connection for good.
	 */
	private record Native(LettuceConnection connection, RedisClusterAsyncCommands<byte[], byte[]> commands) {

		/**
		 * Whether the connection was closed for good, or lost with no reconnecting to
		 * come; not while Lettuce reconnects it ({@code isOpen()} is false then).
		 */
		boolean isClosed() {
			Object stateful = null;
			if (this.commands instanceof RedisAsyncCommands<byte[], byte[]> standalone) {
				stateful = standalone.getStatefulConnection();
			}
			else if (this.commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
				stateful = cluster.getStatefulConnection();
			}
			if (stateful instanceof RedisChannelHandler<?, ?> handler) {
				return handler.isClosed() || (!handler.isOpen() && !handler.getOptions().isAutoReconnect());
			}
			return this.connection.isClosed();
		}

		void close() {
			try {
				this.connection.close();
			}
			catch (RuntimeException ex) {
				// Closing a connection the factory already dropped; nothing left to free.
			}
		}

	}

}
