package dev.distlock.sample.segmented;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.Lease;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;
import dev.distlock.sample.order.StaleWriteException;
import dev.distlock.sample.order.UnknownSkuException;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The stock of hot SKUs split into segments, in one Redis hash per SKU: {@code initial},
 * {@code accepted} (units), {@code segments}, {@code version} (raised by every restock),
 * and per segment {@code s<i>} (units left) and {@code f<i>} (the highest fencing token
 * written with). A segment is read and written only under its segment lock; the write is
 * fenced per segment, like the single-lock sample's.
 */
@Component
public class SegmentedStockStore {

	private static final String KEY_PREFIX = "sample:segmented-stock:";

	/**
	 * KEYS[1] stock hash; ARGV[1] segment, ARGV[2] fencing token, ARGV[3] units. Returns
	 * the units left in the segment, or -1 when the token is not greater than the
	 * segment's fence (nothing is written then).
	 */
	private static final RedisScript<Long> FENCED_TAKE = RedisScript.of("""
			local fence = tonumber(redis.call('hget', KEYS[1], 'f' .. ARGV[1]) or '0')
			if tonumber(ARGV[2]) <= fence then
			  return -1
			end
			redis.call('hset', KEYS[1], 'f' .. ARGV[1], ARGV[2])
			redis.call('hincrby', KEYS[1], 'accepted', ARGV[3])
			return redis.call('hincrby', KEYS[1], 's' .. ARGV[1], -tonumber(ARGV[3]))
			""", Long.class);

	private final StringRedisTemplate redis;

	public SegmentedStockStore(StringRedisTemplate redis) {
		this.redis = redis;
	}

	/**
	 * Splits {@code quantity} over {@code segments} segments (the first ones get one more
	 * when it does not divide), clears the accepted count and raises the version. The
	 * fences are kept: tokens only grow.
	 */
	void restock(String sku, long quantity, int segments) {
		Map<String, String> fields = new HashMap<>();
		fields.put("initial", Long.toString(quantity));
		fields.put("accepted", "0");
		fields.put("segments", Integer.toString(segments));
		for (int i = 0; i < segments; i++) {
			fields.put("s" + i, Long.toString(quantity / segments + ((i < quantity % segments) ? 1 : 0)));
		}
		this.redis.opsForHash().putAll(key(sku), fields);
		this.redis.opsForHash().increment(key(sku), "version", 1);
	}

	/** The segment count and version of {@code sku}'s stock. */
	long[] shape(String sku) {
		List<Object> values = this.redis.opsForHash().multiGet(key(sku), List.of("segments", "version"));
		if (values.get(0) == null) {
			throw new UnknownSkuException(sku);
		}
		return new long[] { Long.parseLong((String) values.get(0)), Long.parseLong((String) values.get(1)) };
	}

	/** The stock as a {@link SegmentedLock.Stock} of {@code sku}. */
	SegmentedLock.Stock stock(String sku) {
		return new SegmentedLock.Stock() {

			@Override
			public int available(int segment, Lease lease) {
				Object value = SegmentedStockStore.this.redis.opsForHash().get(key(sku), "s" + segment);
				return (value != null) ? Integer.parseInt((String) value) : 0;
			}

			@Override
			public void take(int segment, int quantity, Lease lease) {
				long token = (lease instanceof MultiLease multi) ? multi.fencingToken(
						multi.keys().stream().filter((k) -> k.endsWith("#" + segment)).findFirst().orElseThrow())
						: lease.fencingToken();
				Long left = SegmentedStockStore.this.redis.execute(FENCED_TAKE, List.of(key(sku)),
						Integer.toString(segment), Long.toString(token), Integer.toString(quantity));
				if (left == null || left == -1) {
					throw new StaleWriteException(sku, token);
				}
			}

		};
	}

	/** The stock record of {@code sku}. */
	public SegmentedStockLevel level(String sku) {
		Map<Object, Object> all = this.redis.opsForHash().entries(key(sku));
		if (all.isEmpty()) {
			throw new UnknownSkuException(sku);
		}
		int segments = Integer.parseInt((String) all.get("segments"));
		List<Long> left = new ArrayList<>(segments);
		for (int i = 0; i < segments; i++) {
			left.add(Long.parseLong((String) all.getOrDefault("s" + i, "0")));
		}
		long initial = Long.parseLong((String) all.get("initial"));
		long accepted = Long.parseLong((String) all.get("accepted"));
		long remaining = left.stream().mapToLong(Long::longValue).sum();
		return new SegmentedStockLevel(sku, initial, remaining, accepted, Math.max(0, accepted - initial),
				left.stream().anyMatch((units) -> units < 0), left);
	}

	private static String key(String sku) {
		return KEY_PREFIX + sku;
	}

}
