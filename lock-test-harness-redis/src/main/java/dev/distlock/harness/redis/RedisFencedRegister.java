package dev.distlock.harness.redis;

import java.util.List;

import dev.distlock.harness.fuzz.FencedRegister;

import org.jspecify.annotations.Nullable;

/**
 * A {@link FencedRegister} in Redis: a hash with the value and the fence, and a list of
 * the accepted tokens, written by one Lua script so each write is atomic. Any store's
 * paused-holder test may keep it on a redis-server of its own; reach it from every JVM
 * through {@link RedisResources}.
 */
public final class RedisFencedRegister implements FencedRegister {

	static final String KEY = "fenced:register";

	static final String LOG = "fenced:log";

	private static final String WRITE = """
			local fence = tonumber(redis.call('hget', KEYS[1], 'fence') or '0')
			if tonumber(ARGV[1]) < fence then
			  redis.call('hincrby', KEYS[1], 'rejected', 1)
			  return 0
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
			redis.call('rpush', KEYS[2], ARGV[1])
			return 1
			""";

	private final RespClient redis;

	/** A register on the redis-server at {@code host:port}. */
	public RedisFencedRegister(String host, int port) {
		this.redis = new RespClient(host, port);
	}

	@Override
	public boolean write(long token, String value) {
		return this.redis.number("EVAL", WRITE, "2", KEY, LOG, Long.toString(token), value) == 1;
	}

	@Override
	public List<Long> acceptedTokens() {
		Object log = this.redis.call("LRANGE", LOG, "0", "-1");
		return (log instanceof List<?> list) ? list.stream().map((token) -> Long.valueOf((String) token)).toList()
				: List.of();
	}

	@Override
	public long rejected() {
		Object rejected = this.redis.call("HGET", KEY, "rejected");
		return (rejected != null) ? Long.parseLong(rejected.toString()) : 0;
	}

	@Override
	public @Nullable String value() {
		Object value = this.redis.call("HGET", KEY, "value");
		return (value != null) ? value.toString() : null;
	}

	@Override
	public void close() {
		this.redis.close();
	}

}
