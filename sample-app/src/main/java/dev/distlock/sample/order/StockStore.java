package dev.distlock.sample.order;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The stock of each SKU, in one Redis hash per SKU ({@code initial}, {@code remaining},
 * {@code accepted}, {@code fence}) so that every instance sees the same numbers.
 *
 * <p>
 * Reading and writing are deliberately separate round trips: an order reads the remaining
 * stock, works, then writes it back. Nothing here makes that read-modify-write atomic,
 * which is the point: only the distributed lock around it prevents concurrent orders from
 * all reading the same count and overselling.
 *
 * <p>
 * A locked write is also <em>fenced</em>: it carries the lock's fencing token and is
 * applied only if the token is greater than the last one the record saw. The check and
 * the write run as one Lua script, since a separate check-then-set would itself be a
 * race.
 */
@Component
public class StockStore {

	private static final String KEY_PREFIX = "sample:stock:";

	/**
	 * KEYS[1] stock hash; ARGV[1] fencing token, ARGV[2] new remaining stock. Returns the
	 * new accepted count, or -1 when the token is not greater than the stored fence (the
	 * write is then not applied).
	 */
	private static final RedisScript<Long> FENCED_TAKE = RedisScript.of("""
			local fence = tonumber(redis.call('hget', KEYS[1], 'fence') or '0')
			if tonumber(ARGV[1]) <= fence then
			  return -1
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[1], 'remaining', ARGV[2])
			return redis.call('hincrby', KEYS[1], 'accepted', 1)
			""", Long.class);

	private final StringRedisTemplate redis;

	public StockStore(StringRedisTemplate redis) {
		this.redis = redis;
	}

	/**
	 * Sets the stock to {@code quantity} and the accepted count to 0. The fence is kept:
	 * fencing tokens only grow, so a writer that held the lock before the restock is
	 * still recognised as stale.
	 */
	public void restock(String sku, long quantity) {
		String value = Long.toString(quantity);
		this.redis.opsForHash().putAll(key(sku), Map.of("initial", value, "remaining", value, "accepted", "0"));
	}

	/** The stock left for {@code sku}. */
	public long remaining(String sku) {
		Object value = this.redis.opsForHash().get(key(sku), "remaining");
		if (value == null) {
			throw new UnknownSkuException(sku);
		}
		return Long.parseLong((String) value);
	}

	/**
	 * Writes the new stock level and counts one accepted order, without any check;
	 * returns the order number.
	 */
	public long take(String sku, long newRemaining) {
		this.redis.opsForHash().put(key(sku), "remaining", Long.toString(newRemaining));
		return this.redis.opsForHash().increment(key(sku), "accepted", 1);
	}

	/**
	 * As {@link #take}, applied only if {@code fencingToken} is greater than any token
	 * seen before for this SKU.
	 * @throws StaleWriteException if it is not; nothing is written then
	 */
	public long take(String sku, long newRemaining, long fencingToken) {
		Long accepted = this.redis.execute(FENCED_TAKE, List.of(key(sku)), Long.toString(fencingToken),
				Long.toString(newRemaining));
		if (accepted == null || accepted < 0) {
			throw new StaleWriteException(sku, fencingToken);
		}
		return accepted;
	}

	/** The current stock record of {@code sku}. */
	public StockLevel level(String sku) {
		List<Object> values = this.redis.opsForHash()
			.multiGet(key(sku), Arrays.asList("initial", "remaining", "accepted", "fence"));
		if (values.get(0) == null) {
			throw new UnknownSkuException(sku);
		}
		String fence = (String) values.get(3);
		return StockLevel.of(sku, parse(values.get(0)), parse(values.get(1)), parse(values.get(2)),
				(fence != null) ? Long.valueOf(fence) : null);
	}

	private static long parse(@Nullable Object value) {
		return (value != null) ? Long.parseLong((String) value) : 0;
	}

	private static String key(String sku) {
		return KEY_PREFIX + sku;
	}

}
