package dev.distlock.sample.demo;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * A demo run as the page reads it, while it runs and after.
 *
 * @param id the run's number
 * @param sku the SKU it ordered (one per run)
 * @param lock whether the orders were placed under the distributed lock
 * @param stock the stock the run started from
 * @param orders the orders it fires
 * @param concurrency the threads firing them
 * @param done whether every order has been answered
 * @param error why the run stopped early, if it did
 * @param elapsedMillis time since the run started
 * @param accepted orders accepted so far
 * @param soldOut orders refused because nothing was left
 * @param failed orders that failed otherwise (lock wait timed out, store error)
 * @param oversold orders accepted beyond the stock: 0 with the lock
 * @param remaining the stock left, once done
 * @param outcomes every answered order, in the order answered
 */
public record DemoSnapshot(long id, String sku, boolean lock, long stock, int orders, int concurrency, boolean done,
		@Nullable String error, long elapsedMillis, long accepted, long soldOut, long failed, long oversold,
		@Nullable Long remaining, List<Outcome> outcomes) {

	/**
	 * One answered order.
	 *
	 * @param atMillis when it was answered, since the run started
	 * @param outcome {@code accepted}, {@code sold-out}, {@code lock-timeout} or
	 * {@code failed}
	 * @param lockWaitMillis how long it waited for the lock (0 without the lock)
	 */
	public record Outcome(long atMillis, String outcome, double lockWaitMillis) {

	}

}
