package dev.distlock.sample.webflux.purchase;

import java.time.Duration;

import dev.distlock.sample.webflux.SampleProperties;
import dev.distlock.sample.webflux.stock.StockStore;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;

/**
 * One purchase, as a deliberately racy read-check-write: read the stock, work a little (a
 * {@link Mono#delay} that holds no thread), write the stock less one. Run bare
 * ({@link #purchaseUnlocked}), concurrent purchases on this instance or another read the
 * same count and each sell the same last item; {@link LockedPurchaseService} runs the
 * same steps under the SKU's distributed lock.
 */
@Service
public class PurchaseService {

	private final StockStore store;

	private final Duration workPause;

	public PurchaseService(StockStore store, SampleProperties properties) {
		this.store = store;
		this.workPause = properties.workPause();
	}

	/**
	 * Buys one item of {@code sku} with no lock at all; fails with
	 * {@link SoldOutException} when the stock read is 0.
	 */
	public Mono<Purchase> purchaseUnlocked(String sku) {
		return purchase(sku, null);
	}

	/**
	 * Buys one item of {@code sku}, writing the stock with {@code fencingToken} when it
	 * is given (a locked purchase) and unfenced otherwise.
	 */
	Mono<Purchase> purchase(String sku, @Nullable Long fencingToken) {
		return this.store.remaining(sku).flatMap((remaining) -> {
			if (remaining <= 0) {
				return Mono.error(new SoldOutException(sku));
			}
			long left = remaining - 1;
			Mono<Long> write = (fencingToken != null) ? this.store.take(sku, left, fencingToken)
					: this.store.take(sku, left);
			return Mono.delay(this.workPause)
				.then(write)
				.map((saleNumber) -> new Purchase(sku, saleNumber, left, fencingToken != null, fencingToken));
		});
	}

}
