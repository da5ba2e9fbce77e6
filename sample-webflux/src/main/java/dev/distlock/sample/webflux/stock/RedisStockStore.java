package dev.distlock.sample.webflux.stock;

import java.util.List;
import java.util.Map;

import dev.distlock.StaleTokenException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The stock in Redis, one hash per SKU ({@code initial}, {@code value}, {@code sold},
 * {@code token}), so that every instance sees the same numbers. Every call goes through
 * the reactive client: no thread waits for Redis.
 */
public class RedisStockStore implements StockStore {

	private static final String KEY_PREFIX = "sample-webflux:stock:";

	/**
	 * The fenced write: refuses a token below the highest one written with, otherwise
	 * sets the value and the token and counts the sale. One script, so the check and the
	 * write cannot be split by another writer. Answers the sale's number, 0 when the
	 * token is stale, or -1 when the SKU has no stock record.
	 */
	private static final RedisScript<Long> FENCED_TAKE = RedisScript.of("""
			if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
			local highest = tonumber(redis.call('HGET', KEYS[1], 'token') or '-1')
			if tonumber(ARGV[1]) < highest then return 0 end
			redis.call('HSET', KEYS[1], 'value', ARGV[2], 'token', ARGV[1])
			return redis.call('HINCRBY', KEYS[1], 'sold', 1)
			""", Long.class);

	private final ReactiveStringRedisTemplate redis;

	public RedisStockStore(ReactiveStringRedisTemplate redis) {
		this.redis = redis;
	}

	@Override
	public Mono<StockLevel> restock(String sku, long quantity) {
		String value = Long.toString(quantity);
		return this.redis.<String, String>opsForHash()
			.putAll(key(sku), Map.of("initial", value, "value", value, "sold", "0"))
			.then(level(sku));
	}

	@Override
	public Mono<Long> remaining(String sku) {
		return this.redis.<String, String>opsForHash()
			.get(key(sku), "value")
			.switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku)))
			.map(Long::parseLong);
	}

	@Override
	public Mono<Long> take(String sku, long newRemaining) {
		return this.redis.<String, String>opsForHash()
			.put(key(sku), "value", Long.toString(newRemaining))
			.then(this.redis.<String, String>opsForHash().increment(key(sku), "sold", 1));
	}

	@Override
	public Mono<Long> take(String sku, long newRemaining, long fencingToken) {
		return this.redis
			.execute(FENCED_TAKE, List.of(key(sku)), List.of(Long.toString(fencingToken), Long.toString(newRemaining)))
			.next()
			.flatMap((number) -> {
				if (number < 0) {
					return Mono.error(new UnknownSkuException(sku));
				}
				if (number == 0) {
					return this.redis.<String, String>opsForHash()
						.get(key(sku), "token")
						.flatMap((highest) -> Mono
							.error(new StaleTokenException(key(sku), fencingToken, Long.parseLong(highest))));
				}
				return Mono.just(number);
			});
	}

	@Override
	public Mono<StockLevel> level(String sku) {
		return this.redis.<String, String>opsForHash()
			.multiGet(key(sku), List.of("initial", "value", "sold", "token"))
			.flatMap((values) -> (values.get(0) != null) ? Mono.just(values) : Mono.empty())
			.switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku)))
			.map((values) -> StockLevel.of(sku, parse(values.get(0)), parse(values.get(1)), parse(values.get(2)),
					(values.get(3) != null) ? Long.valueOf(values.get(3)) : null));
	}

	private static long parse(@Nullable String value) {
		return (value != null) ? Long.parseLong(value) : 0;
	}

	private static String key(String sku) {
		return KEY_PREFIX + sku;
	}

}
