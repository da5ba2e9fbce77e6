package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.StaleTokenException;
import io.lettuce.core.ScriptOutputType;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Values in Redis that refuse a stale lock holder: each write carries the writer's
 * {@linkplain Lease#fencingToken() fencing token}, and is applied only if that token is
 * at least the highest one the key has accepted. A holder paused past its lease, whose
 * lock a newer holder took and wrote under, gets a {@link StaleTokenException} and
 * changes nothing. A token equal to the highest is accepted (the same holder writing
 * twice).
 *
 * <p>
 * A fenced value is a hash at its key with the fields {@code value} and {@code token};
 * other fields of the hash are left alone, so an application may keep its own beside
 * them. The check and the write are one Lua script, one round trip, so the token and the
 * value change together, and on a Redis Cluster they live in the key's one slot. Writes
 * to the hash that do not go through this class are not fenced.
 *
 * <p>
 * Every call returns or throws {@link LockBackendException} within the timeout, whatever
 * the client's command timeout. A write whose reply did not come in time may still be
 * applied later; it is checked against the highest token when it runs, so a late write is
 * never applied over a newer holder's.
 *
 * <p>
 * Needs Lettuce, as the Redis store does. Tokens are non-negative (every store's are).
 */
public final class RedisFencedValues implements AutoCloseable {

	private final RedisCalls calls;

	/** Values over {@code connectionFactory}, each call bounded by 3 seconds. */
	public RedisFencedValues(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, RedisLockProvider.DEFAULT_STORE_TIMEOUT);
	}

	/**
	 * Values over {@code connectionFactory}, each call bounded by {@code timeout}
	 * (positive).
	 */
	public RedisFencedValues(RedisConnectionFactory connectionFactory, Duration timeout) {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive but was " + timeout);
		}
		this.calls = new RedisCalls(connectionFactory, timeout);
	}

	/**
	 * Sets the value of {@code key} (creating it if absent) if {@code token} is at least
	 * the highest token the key has accepted, and records {@code token} as the highest.
	 * @throws StaleTokenException if {@code token} is lower; nothing is written
	 * @throws LockBackendException if Redis fails or does not answer in time
	 */
	public void set(String key, String value, long token) {
		write(key, "set", FenceScripts.SET, token, args(token, value));
	}

	/**
	 * Sets the value of {@code key} to {@code value} if it is {@code expected}
	 * ({@code null}: if the key has no value) and {@code token} is at least the highest
	 * token the key has accepted, recording {@code token} as the highest.
	 * @return whether the value was set; false when it was not {@code expected}, which
	 * changes nothing (not even the highest token)
	 * @throws StaleTokenException if {@code token} is lower, whatever the value; nothing
	 * is written
	 * @throws LockBackendException if Redis fails or does not answer in time
	 */
	public boolean compareAndSet(String key, @Nullable String expected, String value, long token) {
		byte[][] args = (expected != null) ? args(token, value, expected) : args(token, value);
		return write(key, "compare and set", FenceScripts.COMPARE_AND_SET, token, args);
	}

	/**
	 * The value of {@code key} and the highest token it has accepted, or null when it has
	 * no value.
	 * @throws LockBackendException if Redis fails or does not answer in time
	 */
	public @Nullable FencedValue get(String key) {
		List<?> reply = run(key, "read", FenceScripts.GET, new byte[0][]);
		if (reply.get(0) == null) {
			return null;
		}
		return new FencedValue(text(reply.get(0)), (reply.get(1) != null) ? Long.parseLong(text(reply.get(1))) : 0);
	}

	private boolean write(String key, String operation, RedisScript<?> script, long token, byte[][] args) {
		List<?> reply = run(key, operation, script, args);
		long outcome = (Long) reply.get(0);
		if (outcome == FenceScripts.STALE) {
			throw new StaleTokenException(key, token, Long.parseLong(text(reply.get(1))));
		}
		return outcome == FenceScripts.WRITTEN;
	}

	private List<?> run(String key, String operation, RedisScript<?> script, byte[][] args) {
		try {
			return this.calls.call(key, operation, script, ScriptOutputType.MULTI, this.calls.deadline(),
					new byte[][] { RedisCalls.bytes(key) }, args);
		}
		catch (RedisCalls.UnansweredCallException ex) {
			throw new LockBackendException(key,
					"Redis did not answer within " + this.calls.timeout().toMillis() + "ms to " + operation
							+ " the fenced value '" + key + "'" + (operation.equals("read") ? ""
									: "; the write may still be applied, checked against the highest token then"),
					ex);
		}
		catch (LockBackendException ex) {
			throw new LockBackendException(key,
					"Redis failed to " + operation + " the fenced value '" + key + "': " + innermost(ex).getMessage(),
					ex);
		}
	}

	private static byte[][] args(long token, String... values) {
		if (token < 0) {
			throw new IllegalArgumentException("A fencing token is never negative, but got " + token);
		}
		byte[][] args = new byte[values.length + 1][];
		args[0] = RedisCalls.bytes(Long.toString(token));
		for (int i = 0; i < values.length; i++) {
			args[i + 1] = RedisCalls.bytes(values[i]);
		}
		return args;
	}

	private static String text(Object reply) {
		return new String((byte[]) reply, StandardCharsets.UTF_8);
	}

	private static Throwable innermost(Throwable ex) {
		Throwable cause = ex;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		return cause;
	}

	/** Gives back the connection and stops the connecting thread. */
	@Override
	public void close() {
		this.calls.close();
	}

}
