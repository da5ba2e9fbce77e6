package dev.distlock.sample.load;

import java.util.List;

/**
 * What one load run did and what it left behind.
 *
 * @param sku the SKU ordered
 * @param stock the stock the run started from
 * @param ordersSent the orders fired
 * @param accepted the orders answered 200
 * @param rejected the orders answered 409 (sold out)
 * @param failed the orders answered otherwise, or not at all (503: lock wait timed out)
 * @param remaining the stock left afterwards
 * @param oversold the orders accepted beyond the stock: 0 with the lock
 * @param lock whether the orders were placed under the distributed lock
 * @param instances the base URLs the orders were spread over, round robin
 * @param millis how long the run took
 */
public record LoadReport(String sku, long stock, int ordersSent, int accepted, int rejected, int failed, long remaining,
		long oversold, boolean lock, List<String> instances, long millis) {

}
