package dev.distlock.harness.redis;

import dev.distlock.harness.fuzz.SharedCounter;

/**
 * A {@link SharedCounter} in Redis: the counter under {@code fuzz:counter} ({@code GET},
 * {@code SET}), the occupancy under {@code fuzz:inside} ({@code INCR}, {@code DECR}).
 * Reach it from every JVM through {@link RedisResources}.
 */
public final class RedisSharedCounter implements SharedCounter {

	static final String COUNTER = "fuzz:counter";

	static final String INSIDE = "fuzz:inside";

	private final RespClient redis;

	/** A counter on the redis-server at {@code host:port}. */
	public RedisSharedCounter(String host, int port) {
		this.redis = new RespClient(host, port);
	}

	@Override
	public long enter() {
		return this.redis.number("INCR", INSIDE);
	}

	@Override
	public void exit() {
		this.redis.number("DECR", INSIDE);
	}

	@Override
	public long inside() {
		return number(INSIDE);
	}

	@Override
	public long read() {
		return number(COUNTER);
	}

	@Override
	public void write(long value) {
		this.redis.call("SET", COUNTER, Long.toString(value));
	}

	private long number(String key) {
		Object value = this.redis.call("GET", key);
		return (value != null) ? Long.parseLong(value.toString()) : 0;
	}

	@Override
	public void close() {
		this.redis.close();
	}

}
