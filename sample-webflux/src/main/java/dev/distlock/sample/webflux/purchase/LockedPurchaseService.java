package dev.distlock.sample.webflux.purchase;

import dev.distlock.LockOptions;
import dev.distlock.reactive.ReactiveLockContext;
import dev.distlock.reactive.ReactiveLockTemplate;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;

/**
 * Purchases under the SKU's distributed lock: the lock is taken when the purchase is
 * subscribed to, without blocking the caller's thread, held until the purchase completes,
 * fails or is cancelled, and released once. The stock write carries the lease's fencing
 * token.
 */
@Service
public class LockedPurchaseService {

	private final PurchaseService purchases;

	private final ReactiveLockTemplate locks;

	public LockedPurchaseService(PurchaseService purchases, ReactiveLockTemplate locks) {
		this.purchases = purchases;
		this.locks = locks;
	}

	/**
	 * Buys one item of {@code sku} while holding the lock {@code sku}; fails with
	 * {@link dev.distlock.LockAcquisitionException} if the lock is not free within
	 * {@code distributed-lock.wait-time}.
	 */
	public Mono<Purchase> purchase(String sku) {
		return this.locks.executeMono(sku, LockOptions.defaults(),
				() -> ReactiveLockContext.current()
					.switchIfEmpty(
							Mono.error(() -> new IllegalStateException("A locked purchase ran without its lease")))
					.flatMap((lease) -> this.purchases.purchase(sku, lease.fencingToken())));
	}

}
