package dev.distlock.sample.webflux.purchase;

import dev.distlock.DistributedLock;
import dev.distlock.reactive.ReactiveLockContext;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;

/**
 * Purchases under the SKU's distributed lock, with the configured wait and lease: the
 * lock is taken when the returned {@code Mono} is subscribed to, without blocking the
 * caller's thread, held until the purchase completes, fails or is cancelled, and released
 * once. The stock write carries the lease's fencing token, read from the pipeline's
 * context.
 *
 * <p>
 * Not final, and its locked method public: the lock is applied by a class-based proxy.
 */
@Service
public class LockedPurchaseService {

	private final PurchaseService purchases;

	public LockedPurchaseService(PurchaseService purchases) {
		this.purchases = purchases;
	}

	/**
	 * Buys one item of {@code sku} while holding the lock {@code sku}; fails with
	 * {@link SoldOutException} when none is left, and with
	 * {@link dev.distlock.LockAcquisitionException} if the lock is not free within the
	 * configured wait time.
	 */
	@DistributedLock(key = "#sku")
	public Mono<Purchase> purchase(String sku) {
		return ReactiveLockContext.current()
			.switchIfEmpty(Mono.error(() -> new IllegalStateException("purchase ran without its lock: is distlock's "
					+ "auto-configuration active (distributed-lock.enabled=true)?")))
			.flatMap((lease) -> this.purchases.purchase(sku, lease.fencingToken()));
	}

}
