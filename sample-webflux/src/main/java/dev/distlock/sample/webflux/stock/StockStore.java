package dev.distlock.sample.webflux.stock;

import reactor.core.publisher.Mono;

/**
 * The stock of each SKU, read and written in separate calls so that the read-check-write
 * of a purchase is not atomic: only the distributed lock around it keeps concurrent
 * purchases from all reading the same count and overselling.
 *
 * <p>
 * A locked write is <em>fenced</em>: it carries the lock's fencing token and is refused
 * with {@link dev.distlock.StaleTokenException} if a later holder has written already, so
 * a holder whose lease ran out mid-purchase cannot overwrite the stock. An unlocked write
 * goes around the fence.
 */
public interface StockStore {

	/**
	 * Sets the stock to {@code quantity} and the sold count to 0; keeps the fence, since
	 * fencing tokens only grow.
	 */
	Mono<StockLevel> restock(String sku, long quantity);

	/**
	 * The stock left for {@code sku}; fails with {@link UnknownSkuException} if it was
	 * never stocked.
	 */
	Mono<Long> remaining(String sku);

	/**
	 * Writes the new stock level and counts one sale, without any check.
	 * @return the sale's number since the last restock
	 */
	Mono<Long> take(String sku, long newRemaining);

	/**
	 * As {@link #take(String, long)}, applied only if no holder with a greater
	 * {@code fencingToken} has written this SKU's stock; fails with
	 * {@link dev.distlock.StaleTokenException} otherwise, writing nothing.
	 */
	Mono<Long> take(String sku, long newRemaining, long fencingToken);

	/**
	 * The current stock record of {@code sku}; fails with {@link UnknownSkuException} if
	 * it was never stocked.
	 */
	Mono<StockLevel> level(String sku);

}
