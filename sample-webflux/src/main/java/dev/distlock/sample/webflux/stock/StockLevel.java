package dev.distlock.sample.webflux.stock;

import org.jspecify.annotations.Nullable;

/**
 * The stock record of one SKU, with the oversell it shows.
 *
 * @param sku the SKU
 * @param initial the quantity set by the last restock
 * @param remaining the quantity left to sell
 * @param sold the purchases accepted since the last restock
 * @param oversold how many purchases were accepted beyond the initial quantity; 0 when
 * the stock was protected
 * @param fence the highest fencing token a locked purchase has written with, or
 * {@code null} if none has
 */
public record StockLevel(String sku, long initial, long remaining, long sold, long oversold, @Nullable Long fence) {

	static StockLevel of(String sku, long initial, long remaining, long sold, @Nullable Long fence) {
		return new StockLevel(sku, initial, remaining, sold, Math.max(0, sold - initial), fence);
	}

}
