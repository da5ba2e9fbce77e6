package dev.distlock.sample.order;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

import dev.distlock.StaleTokenException;
import dev.distlock.redis.FencedValue;
import dev.distlock.redis.RedisFencedValues;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * The stock of each SKU, in one Redis hash per SKU so that every instance sees the same
 * numbers: the remaining stock as a fenced value ({@link RedisFencedValues}: the fields
 * {@code value} and {@code token}, the highest fencing token written with), and beside it
 * {@code initial} and {@code accepted}.
 *
 * <p>
 * Reading and writing are deliberately separate round trips: an order reads the remaining
 * stock, works, then writes it back. Nothing here makes that read-modify-write atomic,
 * which is the point: only the distributed lock around it prevents concurrent orders from
 * all reading the same count and overselling.
 *
 * <p>
 * A locked write is also <em>fenced</em>: it carries the lock's fencing token and is
 * refused if a later holder has written already, so a holder whose lease ran out
 * mid-order cannot overwrite the stock. An unlocked write goes around the fence, as any
 * write that does not carry a token does.
 */
@Component
public class StockStore {

	private static final String KEY_PREFIX = "sample:stock:";

	private final StringRedisTemplate redis;

	private final RedisFencedValues fenced;

	public StockStore(StringRedisTemplate redis, RedisFencedValues fenced) {
		this.redis = redis;
		this.fenced = fenced;
	}

	/**
	 * Sets the stock to {@code quantity} and the accepted count to 0. The fence is kept:
	 * fencing tokens only grow, so a writer that held the lock before the restock is
	 * still recognised as stale.
	 */
	public void restock(String sku, long quantity) {
		String value = Long.toString(quantity);
		this.redis.opsForHash().putAll(key(sku), Map.of("initial", value, "value", value, "accepted", "0"));
	}

	/** The stock left for {@code sku}. */
	public long remaining(String sku) {
		FencedValue stock = this.fenced.get(key(sku));
		if (stock == null) {
			throw new UnknownSkuException(sku);
		}
		return Long.parseLong(stock.value());
	}

	/**
	 * Writes the new stock level and counts one accepted order, without any check;
	 * returns the order number.
	 */
	public long take(String sku, long newRemaining) {
		this.redis.opsForHash().put(key(sku), "value", Long.toString(newRemaining));
		return this.redis.opsForHash().increment(key(sku), "accepted", 1);
	}

	/**
	 * As {@link #take}, applied only if no holder with a greater {@code fencingToken} has
	 * written this SKU's stock.
	 * @throws StaleTokenException if one has; nothing is written then
	 */
	public long take(String sku, long newRemaining, long fencingToken) {
		this.fenced.set(key(sku), Long.toString(newRemaining), fencingToken);
		return this.redis.opsForHash().increment(key(sku), "accepted", 1);
	}

	/** The current stock record of {@code sku}. */
	public StockLevel level(String sku) {
		List<Object> values = this.redis.opsForHash()
			.multiGet(key(sku), Arrays.asList("initial", "value", "accepted", "token"));
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
