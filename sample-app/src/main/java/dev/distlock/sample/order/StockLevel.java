package dev.distlock.sample.order;

import org.jspecify.annotations.Nullable;

/**
 * The stock record of one SKU as stored in Redis, with the oversell it shows.
 *
 * @param sku the SKU
 * @param initial the quantity set by the last restock
 * @param remaining the quantity left to sell
 * @param accepted the orders accepted since the last restock
 * @param oversold how many orders were accepted beyond the initial quantity; 0 when the
 * stock was protected
 * @param fence the highest fencing token a locked order has written with, or {@code null}
 * if none has
 */
public record StockLevel(String sku, long initial, long remaining, long accepted, long oversold, @Nullable Long fence) {

	static StockLevel of(String sku, long initial, long remaining, long accepted, @Nullable Long fence) {
		return new StockLevel(sku, initial, remaining, accepted, Math.max(0, accepted - initial), fence);
	}

}
