package dev.distlock.sample.order;

import org.jspecify.annotations.Nullable;

/**
 * An accepted order.
 *
 * @param sku the SKU ordered
 * @param orderNumber the order's number among those accepted since the last restock (1,
 * 2, ...)
 * @param remaining the stock this order left behind
 * @param locked whether the order was placed under the distributed lock
 * @param fencingToken the lock's fencing token the stock write carried; {@code null} for
 * an unlocked order
 */
public record OrderConfirmation(String sku, long orderNumber, long remaining, boolean locked,
		@Nullable Long fencingToken) {

}
