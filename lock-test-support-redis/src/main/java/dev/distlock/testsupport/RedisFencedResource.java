package dev.distlock.fault;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The resource the locks protect, on a Redis server of its own that no fault touches: per
 * lock key a hash with a value, an occupancy counter and a fence. Entering is a fenced
 * read (a token below the fence is refused, otherwise it becomes the fence), writing is a
 * fenced write, as a database row with a {@code fence} column would do it. So once a
 * newer holder has entered, every write of an older one is rejected, whatever the order
 * of their writes; and a holder that finds the occupancy above one has met another holder
 * inside.
 *
 * <p>
 * Calls run on a thread of the resource's own and the caller waits without being
 * interruptible: the run interrupts workers to test the lock library, and an interrupt
 * must not leave a resource call half-known (applied, but its reply abandoned).
 */
final class FencedResource {

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> ENTER = RedisScript.of("""
			local occupancy = redis.call('hincrby', KEYS[1], 'occupancy', 1)
			local fence = redis.call('hget', KEYS[1], 'fence')
			if fence and tonumber(ARGV[1]) < tonumber(fence) then
			  redis.call('hincrby', KEYS[1], 'refused', 1)
			  return {occupancy, 0, 0}
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1])
			return {occupancy, 1, tonumber(redis.call('hget', KEYS[1], 'value') or '0')}
			""", List.class);

	private static final RedisScript<Long> WRITE = RedisScript.of("""
			local fence = redis.call('hget', KEYS[1], 'fence')
			if fence and tonumber(ARGV[1]) < tonumber(fence) then
			  redis.call('hincrby', KEYS[1], 'rejected', 1)
			  return 0
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
			redis.call('hincrby', KEYS[1], 'accepted', 1)
			return 1
			""", Long.class);

	private final StringRedisTemplate redis;

	private final ExecutorService executor = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "fenced-resource");
		thread.setDaemon(true);
		return thread;
	});

	FencedResource(StringRedisTemplate redis) {
		this.redis = redis;
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

	static String key(String lockKey) {
		return "resource:" + lockKey;
	}

	/** Enters with {@code token}: occupancy after entering, and the value if admitted. */
	Entry enter(String lockKey, long token) {
		List<?> reply = call(() -> this.redis.execute(ENTER, List.of(key(lockKey)), Long.toString(token)));
		return new Entry(((Number) reply.get(0)).longValue(), ((Number) reply.get(1)).longValue() == 1,
				((Number) reply.get(2)).longValue());
	}

	boolean write(String lockKey, long token, long value) {
		Long accepted = call(
				() -> this.redis.execute(WRITE, List.of(key(lockKey)), Long.toString(token), Long.toString(value)));
		return accepted != null && accepted == 1;
	}

	void exit(String lockKey) {
		call(() -> this.redis.opsForHash().increment(key(lockKey), "occupancy", -1));
	}

	long field(String lockKey, String field) {
		Object value = this.redis.opsForHash().get(key(lockKey), field);
		return (value != null) ? Long.parseLong(value.toString()) : 0;
	}

	void close() {
		this.executor.shutdownNow();
	}

	record Entry(long occupancy, boolean admitted, long value) {
	}

}
