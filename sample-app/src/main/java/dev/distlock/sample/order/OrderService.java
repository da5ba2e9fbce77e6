package dev.distlock.sample.order;

import java.time.Duration;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockTemplate;
import dev.distlock.sample.SampleProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.stereotype.Service;

/**
 * Places orders against the shared stock, once with the distributed lock and once
 * without, so the difference can be seen: the same read-modify-write, {@link #placeOrder}
 * serialised per SKU across every instance, {@link #placeOrderUnlocked} left to race.
 *
 * <p>
 * Not final, and its locked methods public: the lock is applied by a class-based proxy.
 */
@Service
public class OrderService {

	private final StockStore store;

	private final LockTemplate lockTemplate;

	private final Duration workPause;

	public OrderService(StockStore store, LockTemplate lockTemplate, SampleProperties properties) {
		this.store = store;
		this.lockTemplate = lockTemplate;
		this.workPause = properties.workPause();
	}

	/**
	 * Places one order while holding the lock {@code stock:<sku>}, with the options of
	 * {@code distributed-lock.locks.stock}. The stock write carries the lease's fencing
	 * token, so even a holder whose lease was lost mid-order cannot overwrite a later
	 * holder's stock level.
	 * @throws SoldOutException if no stock is left
	 * @throws dev.distlock.LockAcquisitionException if the lock was not acquired within
	 * its wait time
	 */
	@DistributedLock(key = "'stock:' + #sku", name = "stock")
	public OrderConfirmation placeOrder(String sku) {
		Lease lease = LockContext.current()
			.orElseThrow(() -> new IllegalStateException("placeOrder ran without its lock: is distlock's "
					+ "auto-configuration active (distributed-lock.enabled=true)?"));
		return order(sku, lease.fencingToken());
	}

	/**
	 * Places one order with no lock at all: concurrent calls, in this instance or
	 * another, can read the same stock level and each accept an order for the same last
	 * item.
	 * @throws SoldOutException if no stock is left
	 */
	public OrderConfirmation placeOrderUnlocked(String sku) {
		return order(sku, null);
	}

	/**
	 * Sets the stock of {@code sku} and clears its accepted count. Uses the same lock as
	 * {@link #placeOrder}, through {@link LockTemplate}, so a restock never interleaves
	 * with a locked order.
	 */
	public StockLevel restock(String sku, long quantity) {
		if (quantity < 0) {
			throw new IllegalArgumentException("quantity must not be negative but was " + quantity);
		}
		this.lockTemplate.run("stock:" + sku, () -> this.store.restock(sku, quantity));
		return this.store.level(sku);
	}

	/** The current stock record of {@code sku}. */
	public StockLevel stock(String sku) {
		return this.store.level(sku);
	}

	private OrderConfirmation order(String sku, @Nullable Long fencingToken) {
		long remaining = this.store.remaining(sku);
		if (remaining <= 0) {
			throw new SoldOutException(sku);
		}
		simulateWork();
		long left = remaining - 1;
		long orderNumber = (fencingToken != null) ? this.store.take(sku, left, fencingToken)
				: this.store.take(sku, left);
		return new OrderConfirmation(sku, orderNumber, left, fencingToken != null, fencingToken);
	}

	/**
	 * Stands in for the work between reading and writing the stock (payment, reservation,
	 * ...).
	 */
	private void simulateWork() {
		try {
			Thread.sleep(this.workPause.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while processing an order", ex);
		}
	}

}
