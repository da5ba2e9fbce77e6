package dev.distlock.sample.webflux.purchase;

import java.time.Duration;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import reactor.core.publisher.Mono;

import org.springframework.stereotype.Service;

/**
 * Purchases under the SKU's distributed lock.
 */
@Service
public class LockedPurchaseService {

	private final PurchaseService purchases;

	private final AsyncLockTemplate locks;

	public LockedPurchaseService(PurchaseService purchases, AsyncLockTemplate locks) {
		this.purchases = purchases;
		this.locks = locks;
	}

	/** Buys one item of {@code sku} while holding the lock {@code sku}. */
	public Mono<Purchase> purchase(String sku) {
		LockOptions options = LockOptions.builder().waitTime(Duration.ofSeconds(10)).build();
		return Mono.usingWhen(Mono.fromCompletionStage(() -> this.locks.acquire(sku, options)),
				(Lease lease) -> this.purchases.purchase(sku, lease.fencingToken()),
				(Lease lease) -> Mono.fromRunnable(lease::release));
	}

}
