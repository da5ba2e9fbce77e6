package dev.distlock.fuzz;

import java.util.List;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A resource that fences its writers, as a database row with a {@code fence} column would
 * ({@code UPDATE ... SET value = ?, fence = ? WHERE id = ? AND fence <= ?}): a write
 * carrying a fencing token lower than the last accepted one is rejected; the same holder
 * may write more than once. Every accepted write is logged, so a checker can look for a
 * stale write that got through.
 */
final class FencedRegister {

	static final String KEY = "fenced:register";

	static final String LOG = "fenced:log";

	private static final RedisScript<Long> WRITE = RedisScript.of("""
			local fence = tonumber(redis.call('hget', KEYS[1], 'fence') or '0')
			if tonumber(ARGV[1]) < fence then
			  redis.call('hincrby', KEYS[1], 'rejected', 1)
			  return 0
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
			redis.call('rpush', KEYS[2], ARGV[1])
			return 1
			""", Long.class);

	private final StringRedisTemplate redis;

	FencedRegister(StringRedisTemplate redis) {
		this.redis = redis;
	}

	/**
	 * Writes {@code value} unless an accepted write carried a greater token; returns
	 * whether it was.
	 */
	boolean write(long token, String value) {
		Long accepted = this.redis.execute(WRITE, List.of(KEY, LOG), Long.toString(token), value);
		return accepted != null && accepted == 1;
	}

	/** The fencing tokens of the accepted writes, in order. */
	List<Long> acceptedTokens() {
		List<String> log = this.redis.opsForList().range(LOG, 0, -1);
		return (log != null) ? log.stream().map(Long::valueOf).toList() : List.of();
	}

	long rejected() {
		Object rejected = this.redis.opsForHash().get(KEY, "rejected");
		return (rejected != null) ? Long.parseLong(rejected.toString()) : 0;
	}

	String value() {
		Object value = this.redis.opsForHash().get(KEY, "value");
		return (value != null) ? value.toString() : null;
	}

}
