package dev.distlock.sample.webflux.purchase;

import org.jspecify.annotations.Nullable;

/**
 * An accepted purchase.
 *
 * @param sku the SKU bought
 * @param saleNumber the purchase's number among those accepted since the last restock (1,
 * 2, ...)
 * @param remaining the stock this purchase left behind
 * @param locked whether the purchase was made under the distributed lock
 * @param fencingToken the lock's fencing token the stock write carried; {@code null} for
 * an unlocked purchase
 */
public record Purchase(String sku, long saleNumber, long remaining, boolean locked, @Nullable Long fencingToken) {

}
