package dev.distlock.sample.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.distlock.LockAcquisitionException;
import dev.distlock.sample.order.OrderService;
import dev.distlock.sample.order.SoldOutException;
import dev.distlock.sample.order.StockLevel;
import org.jspecify.annotations.Nullable;

/**
 * One run of the oversell demo: restock a SKU, fire {@code orders} concurrent orders at
 * it from {@code concurrency} threads, with or without the lock, and record every outcome
 * as it happens so that the page can plot the run live.
 */
final class DemoRun {

	private final long id;

	private final String sku;

	private final boolean lock;

	private final long stock;

	private final int orders;

	private final int concurrency;

	private final List<DemoSnapshot.Outcome> outcomes = new ArrayList<>();

	private final long startNanos = System.nanoTime();

	private volatile @Nullable StockLevel finalLevel;

	private volatile @Nullable String error;

	DemoRun(long id, boolean lock, long stock, int orders, int concurrency) {
		this.id = id;
		this.sku = "demo-" + id;
		this.lock = lock;
		this.stock = stock;
		this.orders = orders;
		this.concurrency = concurrency;
	}

	long id() {
		return this.id;
	}

	/** Runs the orders on this thread's behalf and returns when every one is answered. */
	void run(OrderService service, TimedOrders timed) {
		try {
			service.restock(this.sku, this.stock);
			ExecutorService threads = Executors.newFixedThreadPool(this.concurrency);
			try {
				for (int i = 0; i < this.orders; i++) {
					threads.execute(() -> order(timed));
				}
			}
			finally {
				threads.shutdown();
				threads.awaitTermination(5, TimeUnit.MINUTES);
			}
			this.finalLevel = service.stock(this.sku);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			this.error = "interrupted";
		}
		catch (RuntimeException ex) {
			this.error = ex.toString();
		}
	}

	private void order(TimedOrders timed) {
		long called = System.nanoTime();
		long[] waited = { 0 };
		String outcome;
		try {
			if (this.lock) {
				timed.locked(this.sku, called, (nanos) -> waited[0] = nanos);
			}
			else {
				timed.unlocked(this.sku);
			}
			outcome = "accepted";
		}
		catch (SoldOutException ex) {
			outcome = "sold-out";
		}
		catch (LockAcquisitionException ex) {
			waited[0] = System.nanoTime() - called;
			outcome = "lock-timeout";
		}
		catch (RuntimeException ex) {
			outcome = "failed";
		}
		record(new DemoSnapshot.Outcome(millisSince(this.startNanos), outcome, waited[0] / 1_000_000.0));
	}

	private synchronized void record(DemoSnapshot.Outcome outcome) {
		this.outcomes.add(outcome);
	}

	synchronized DemoSnapshot snapshot() {
		List<DemoSnapshot.Outcome> copy = List.copyOf(this.outcomes);
		long accepted = copy.stream().filter((o) -> o.outcome().equals("accepted")).count();
		StockLevel level = this.finalLevel;
		boolean done = level != null || this.error != null;
		return new DemoSnapshot(this.id, this.sku, this.lock, this.stock, this.orders, this.concurrency, done,
				this.error, millisSince(this.startNanos), accepted, count(copy, "sold-out"),
				count(copy, "lock-timeout") + count(copy, "failed"),
				(level != null) ? level.oversold() : Math.max(0, accepted - this.stock),
				(level != null) ? level.remaining() : null, copy);
	}

	private static long count(List<DemoSnapshot.Outcome> outcomes, String outcome) {
		return outcomes.stream().filter((o) -> o.outcome().equals(outcome)).count();
	}

	private static long millisSince(long startNanos) {
		return (System.nanoTime() - startNanos) / 1_000_000;
	}

}
