package dev.distlock.sample.segmented;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.SegmentedLock;
import dev.distlock.sample.order.SoldOutException;

import org.springframework.stereotype.Service;

/**
 * Orders against a hot SKU whose stock is split into segments, each with its own lock
 * ({@link SegmentedLock}): N orders proceed at once, one per free segment, instead of
 * queueing on one lock; an order larger than any segment's stock takes several segments
 * together. The lock of segment {@code i} is {@code segmented-stock:<sku>#<i>}.
 *
 * <p>
 * Which segments are empty is remembered per instance; every restock raises the stock's
 * version, and an instance that sees a new version starts over with no segment marked.
 */
@Service
public class SegmentedOrderService {

	private final SegmentedStockStore store;

	private final LockTemplate locks;

	private final Map<String, Versioned> segmented = new ConcurrentHashMap<>();

	public SegmentedOrderService(SegmentedStockStore store, LockTemplate locks) {
		this.store = store;
		this.locks = locks;
	}

	/** Sets the stock of {@code sku} to {@code quantity} split over {@code segments}. */
	public SegmentedStockLevel restock(String sku, long quantity, int segments) {
		if (quantity < 0 || segments < 1 || segments > 1024) {
			throw new IllegalArgumentException("quantity must not be negative and segments must be 1 to 1024, but were "
					+ quantity + " and " + segments);
		}
		SegmentedLock lock = this.locks.segmented("segmented-stock:" + sku, segments);
		try (var all = lock.acquireSegments(IntStream.range(0, segments).boxed().toList(), LockOptions.defaults())) {
			this.store.restock(sku, quantity, segments);
		}
		return this.store.level(sku);
	}

	/**
	 * Takes {@code quantity} units of {@code sku}.
	 * @throws SoldOutException if the segments together hold less
	 * @throws LockAcquisitionException if no segment (or not the segments needed) came
	 * free within the wait time
	 */
	public void order(String sku, int quantity) {
		long[] shape = this.store.shape(sku);
		SegmentedLock lock = this.segmented.compute(sku, (key,
				current) -> (current != null && current.version == shape[1] && current.lock.segments() == shape[0])
						? current
						: new Versioned(shape[1], this.locks.segmented("segmented-stock:" + sku, (int) shape[0]))).lock;
		if (lock.take(quantity, LockOptions.defaults(), this.store.stock(sku))) {
			return;
		}
		if (this.store.level(sku).remaining() < quantity) {
			throw new SoldOutException(sku);
		}
		throw new LockAcquisitionException(lock.key(), java.time.Duration.ZERO,
				"No segment of '" + sku + "' holding " + quantity + " came free within the wait time", null);
	}

	/** The stock record of {@code sku}. */
	public SegmentedStockLevel stock(String sku) {
		return this.store.level(sku);
	}

	private record Versioned(long version, SegmentedLock lock) {
	}

}
