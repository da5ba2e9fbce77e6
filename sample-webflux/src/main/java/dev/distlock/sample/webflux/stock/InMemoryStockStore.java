package dev.distlock.sample.webflux.stock;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.StaleTokenException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The stock in this JVM's memory: for running one instance with nothing installed. Each
 * call is atomic on its own, but a purchase's read and write are separate calls, as with
 * Redis.
 */
public class InMemoryStockStore implements StockStore {

	private final Map<String, Stock> stock = new ConcurrentHashMap<>();

	@Override
	public Mono<StockLevel> restock(String sku, long quantity) {
		return Mono
			.fromSupplier(() -> this.stock.compute(sku,
					(key, old) -> new Stock(quantity, quantity, 0, (old != null) ? old.fence() : null)))
			.map((record) -> record.level(sku));
	}

	@Override
	public Mono<Long> remaining(String sku) {
		return find(sku).map(Stock::remaining);
	}

	@Override
	public Mono<Long> take(String sku, long newRemaining) {
		return Mono
			.fromSupplier(() -> this.stock.computeIfPresent(sku,
					(key, old) -> new Stock(old.initial(), newRemaining, old.sold() + 1, old.fence())))
			.switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku)))
			.map(Stock::sold);
	}

	@Override
	public Mono<Long> take(String sku, long newRemaining, long fencingToken) {
		return Mono.fromSupplier(() -> this.stock.computeIfPresent(sku, (key, old) -> {
			if (old.fence() != null && fencingToken < old.fence()) {
				throw new StaleTokenException(key, fencingToken, old.fence());
			}
			return new Stock(old.initial(), newRemaining, old.sold() + 1, fencingToken);
		})).switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku))).map(Stock::sold);
	}

	@Override
	public Mono<StockLevel> level(String sku) {
		return find(sku).map((record) -> record.level(sku));
	}

	private Mono<Stock> find(String sku) {
		return Mono.fromSupplier(() -> this.stock.get(sku))
			.switchIfEmpty(Mono.error(() -> new UnknownSkuException(sku)));
	}

	private record Stock(long initial, long remaining, long sold, @Nullable Long fence) {

		StockLevel level(String sku) {
			return StockLevel.of(sku, this.initial, this.remaining, this.sold, this.fence);
		}

	}

}
