package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts of {@link RedisFencedValues}, one round trip each. A fenced value is a hash
 * at its key with the fields {@code value} and {@code token} (the highest fencing token
 * accepted, in decimal), so value and token are always in one slot and change together.
 * Tokens compare as decimal numbers of any length, exactly (Lua's numbers are doubles,
 * exact only up to 2^53).
 *
 * <p>
 * {@link #SET} and {@link #COMPARE_AND_SET} take {@code KEYS[1]} the key, {@code ARGV[1]}
 * the token and {@code ARGV[2]} the new value; they reply {@code {1}} when they wrote,
 * {@code {-1, highest}} when the token is below the highest accepted one (nothing is
 * written), and {@link #COMPARE_AND_SET} {@code {0}} when the value was not the expected
 * one ({@code ARGV[3]}; absent: no value), which changes nothing either.
 */
final class FenceScripts {

	private FenceScripts() {
	}

	/** The reply of a write that was applied. */
	static final long WRITTEN = 1;

	/** The reply of a compare-and-set whose value was not the expected one. */
	static final long NOT_EXPECTED = 0;

	/** The reply of a write refused for its stale token, followed by the highest one. */
	static final long STALE = -1;

	/** Refuses a token below the highest accepted one, as {@code {-1, highest}}. */
	private static final String CHECK = """
			local function below(a, b)
			  if #a ~= #b then
			    return #a < #b
			  end
			  return a < b
			end
			local highest = redis.call('hget', KEYS[1], 'token')
			if highest and below(ARGV[1], highest) then
			  return {-1, highest}
			end
			""";

	private static final String WRITE = """
			redis.call('hset', KEYS[1], 'value', ARGV[2], 'token', ARGV[1])
			return {1}
			""";

	static final RedisScript<List> SET = RedisScript.of(CHECK + WRITE, List.class);

	static final RedisScript<List> COMPARE_AND_SET = RedisScript.of(CHECK + """
			local current = redis.call('hget', KEYS[1], 'value')
			if ARGV[3] then
			  if current ~= ARGV[3] then
			    return {0}
			  end
			elseif current then
			  return {0}
			end
			""" + WRITE, List.class);

	/** Replies {@code {value, token}}, each nil when absent. */
	static final RedisScript<List> GET = RedisScript.of("return redis.call('hmget', KEYS[1], 'value', 'token')",
			List.class);

}
