package dev.distlock.docs;

import java.time.Duration;
import java.util.List;

import dev.distlock.DistributedLatch;
import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;

/**
 * The code of {@code docs/family.md}.
 */
class FamilyPage {

	LockTemplate locks;

	// @formatter:off
	@DistributedLock(key = "'catalog'", mode = LockMode.READ)
	public Catalog read() { throw new UnsupportedOperationException(); }

	@DistributedLock(key = "'catalog'")                     // mode = LockMode.WRITE, the default
	public void publish(Catalog catalog) { }
	// @formatter:on

	// @formatter:off
	@DistributedLock(key = "'exports'", permits = 5)
	public void export() { }
	// @formatter:on

	// @formatter:off
	@DistributedLock(keys = { "'account:' + #from", "'account:' + #to" })
	public void transfer(long from, long to, long cents) { }

	@DistributedLock(keys = "#order.skus")          // a collection or an array: one key per element
	public void reserve(Order order) { }
	// @formatter:on

	void writeAll() {
		// @formatter:off
		try (MultiLease lease = locks.acquireAll(List.of("a", "b", "c"), LockOptions.defaults())) {
			write(lease.fencingToken("a"), lease.fencingToken("b"), lease.fencingToken("c"));
		}
		// @formatter:on
	}

	void latch(String workerId) throws InterruptedException {
		// @formatter:off
		DistributedLatch ready = locks.latch("import-42", 3, Duration.ofHours(1));
		ready.countDown("worker-" + workerId);        // idempotent per participant
		boolean open = ready.await(Duration.ofMinutes(5));
		DistributedLatch next = ready.rearm(3);          // a new generation
		// @formatter:on
	}

	void segmented(String sku, int quantity) {
		// @formatter:off
		SegmentedLock lock = locks.segmented("stock:" + sku, 16);
		boolean sold = lock.take(quantity, LockOptions.defaults(), new SegmentedLock.Stock() {
			public int available(int segment, Lease lease) { return units(sku, segment); }
			public void take(int segment, int units, Lease lease) { decrement(sku, segment, units, lease.fencingToken()); }
		});
		// @formatter:on
	}

	void write(long... tokens) {
	}

	int units(String sku, int segment) {
		throw new UnsupportedOperationException();
	}

	void decrement(String sku, int segment, int units, long token) {
	}

	record Catalog() {
	}

	record Order(List<String> skus) {
	}

}
