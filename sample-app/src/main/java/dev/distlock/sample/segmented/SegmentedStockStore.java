package dev.distlock.sample.segmented;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.Lease;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;
import dev.distlock.redis.FencedValue;
import dev.distlock.redis.RedisFencedValues;
import dev.distlock.sample.order.UnknownSkuException;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * The stock of hot SKUs split into segments: one Redis hash per SKU with {@code initial},
 * {@code accepted} (units), {@code segments} and {@code version} (raised by every
 * restock), and one fenced value per segment ({@link RedisFencedValues}: units left, and
 * the highest fencing token written with). A segment is read and written only under its
 * segment lock; the write is fenced per segment, like the single-lock sample's, and a
 * compare-and-set, so it applies only over the units the holder read.
 */
@Component
public class SegmentedStockStore {

	private static final String KEY_PREFIX = "sample:segmented-stock:";

	private final StringRedisTemplate redis;

	private final RedisFencedValues fenced;

	public SegmentedStockStore(StringRedisTemplate redis, RedisFencedValues fenced) {
		this.redis = redis;
		this.fenced = fenced;
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
		this.redis.opsForHash().putAll(key(sku), fields);
		for (int i = 0; i < segments; i++) {
			long units = quantity / segments + ((i < quantity % segments) ? 1 : 0);
			this.redis.opsForHash().put(segmentKey(sku, i), "value", Long.toString(units));
		}
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
				FencedValue units = SegmentedStockStore.this.fenced.get(segmentKey(sku, segment));
				return (units != null) ? Integer.parseInt(units.value()) : 0;
			}

			@Override
			public void take(int segment, int quantity, Lease lease) {
				long token = (lease instanceof MultiLease multi) ? multi.fencingToken(
						multi.keys().stream().filter((k) -> k.endsWith("#" + segment)).findFirst().orElseThrow())
						: lease.fencingToken();
				String key = segmentKey(sku, segment);
				FencedValue units = SegmentedStockStore.this.fenced.get(key);
				String left = (units != null) ? units.value() : "0";
				String after = Long.toString(Long.parseLong(left) - quantity);
				// Throws StaleTokenException when a later holder of the segment has
				// written.
				if (!SegmentedStockStore.this.fenced.compareAndSet(key, left, after, token)) {
					throw new IllegalStateException("Segment " + segment + " of '" + sku
							+ "' changed while its lock was held: something writes it without the lock");
				}
				SegmentedStockStore.this.redis.opsForHash().increment(key(sku), "accepted", quantity);
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
		List<Object> units = this.redis.executePipelined((RedisCallback<Object>) (connection) -> {
			for (int i = 0; i < segments; i++) {
				connection.hashCommands().hGet(bytes(segmentKey(sku, i)), bytes("value"));
			}
			return null;
		});
		List<Long> left = new ArrayList<>(segments);
		for (Object value : units) {
			left.add((value != null) ? Long.parseLong((String) value) : 0);
		}
		long initial = Long.parseLong((String) all.get("initial"));
		long accepted = Long.parseLong((String) all.get("accepted"));
		long remaining = left.stream().mapToLong(Long::longValue).sum();
		return new SegmentedStockLevel(sku, initial, remaining, accepted, Math.max(0, accepted - initial),
				left.stream().anyMatch((u) -> u < 0), left);
	}

	private static String key(String sku) {
		return KEY_PREFIX + sku;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static String segmentKey(String sku, int segment) {
		return KEY_PREFIX + sku + ":" + segment;
	}

}
