package dev.distlock.sample.demo;

import java.util.function.LongConsumer;

import dev.distlock.DistributedLock;
import dev.distlock.sample.order.OrderConfirmation;
import dev.distlock.sample.order.OrderService;

import org.springframework.stereotype.Component;

/**
 * Orders of the demo, timed: how long each waited for the SKU's lock. The locked method
 * takes the same lock as {@link OrderService#placeOrder} (same key, same options), so the
 * wait is measured where it ends, on entry, and the nested {@code placeOrder} re-enters
 * it without waiting again.
 *
 * <p>
 * Not final, and its locked method public: the lock is applied by a class-based proxy.
 */
@Component
public class TimedOrders {

	private final OrderService orders;

	public TimedOrders(OrderService orders) {
		this.orders = orders;
	}

	/**
	 * Places an order under the lock, first telling {@code lockWait} how many nanoseconds
	 * passed since {@code calledAtNanos} ({@link System#nanoTime()} before the call).
	 */
	@DistributedLock(key = "'stock:' + #sku", name = "stock")
	public OrderConfirmation locked(String sku, long calledAtNanos, LongConsumer lockWait) {
		lockWait.accept(System.nanoTime() - calledAtNanos);
		return this.orders.placeOrder(sku);
	}

	/** Places an order without any lock; there is no wait to report. */
	public OrderConfirmation unlocked(String sku) {
		return this.orders.placeOrderUnlocked(sku);
	}

}
