package dev.distlock.harness.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import dev.distlock.harness.fault.FencedResource;

/**
 * The fault workload's {@link FencedResource} on a redis-server of its own that no fault
 * touches, for the fault suite of any store: per lock key a hash with a value, an
 * occupancy counter and a fence, changed by Lua scripts, so each call is atomic. Start
 * the server with {@link RedisServer#start(String...)} and reach it from every JVM of a
 * run through {@link RedisResources}.
 *
 * <p>
 * Calls run on a thread of the resource's own and the caller waits without being
 * interruptible: the run interrupts workers to test the lock library, and an interrupt
 * must not leave a resource call half-known (applied, but its reply abandoned).
 */
public final class RedisFencedResource implements FencedResource {

	private static final String ENTER = """
			local occupancy = redis.call('hincrby', KEYS[1], 'occupancy', 1)
			local fence = redis.call('hget', KEYS[1], 'fence')
			if fence and tonumber(ARGV[1]) < tonumber(fence) then
			  redis.call('hincrby', KEYS[1], 'refused', 1)
			  return {occupancy, 0, 0}
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1])
			return {occupancy, 1, tonumber(redis.call('hget', KEYS[1], 'value') or '0')}
			""";

	private static final String WRITE = """
			local fence = redis.call('hget', KEYS[1], 'fence')
			if fence and tonumber(ARGV[1]) < tonumber(fence) then
			  redis.call('hincrby', KEYS[1], 'rejected', 1)
			  return 0
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
			redis.call('hincrby', KEYS[1], 'accepted', 1)
			return 1
			""";

	private final RespClient redis;

	private final ExecutorService executor = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "fenced-resource");
		thread.setDaemon(true);
		return thread;
	});

	/** A resource on the redis-server at {@code host:port}. */
	public RedisFencedResource(String host, int port) {
		this.redis = new RespClient(host, port);
	}

	private <T> T call(Supplier<T> call) {
		try {
			return CompletableFuture.supplyAsync(call, this.executor).join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw ex;
		}
	}

	/** The Redis key of a lock key's hash. */
	static String key(String lockKey) {
		return "resource:" + lockKey;
	}

	@Override
	public Entry enter(String lockKey, long token) {
		List<?> reply = (List<?>) call(() -> this.redis.call("EVAL", ENTER, "1", key(lockKey), Long.toString(token)));
		return new Entry(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() == 1,
				((Number) reply.get(2)).longValue());
	}

	@Override
	public boolean write(String lockKey, long token, long value) {
		long accepted = call(
				() -> this.redis.number("EVAL", WRITE, "1", key(lockKey), Long.toString(token), Long.toString(value)));
		return accepted == 1;
	}

	@Override
	public void exit(String lockKey) {
		call(() -> this.redis.number("HINCRBY", key(lockKey), "occupancy", "-1"));
	}

	@Override
	public long accepted(String lockKey) {
		return field(lockKey, "accepted");
	}

	@Override
	public long value(String lockKey) {
		return field(lockKey, "value");
	}

	/**
	 * A field of a lock key's hash: {@code occupancy}, {@code refused}, ...; 0 if unset.
	 */
	public long field(String lockKey, String field) {
		Object value = this.redis.call("HGET", key(lockKey), field);
		return (value != null) ? Long.parseLong(value.toString()) : 0;
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
		this.redis.close();
	}

}
