package dev.distlock.autoconfigure.aot;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.OnFailure;
import dev.distlock.contract.TestThreads;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Annotated services for the AOT-mode tests, one per group of store capabilities, and the
 * checks each store's test runs on them once the application is started from the code
 * generated ahead of time. The option set {@code stock} must be configured with a wait of
 * {@link #STOCK_WAIT}.
 */
final class AotServices {

	/** The wait of the option set {@code stock}, which every test configures. */
	static final String STOCK_WAIT = "150ms";

	static final String[] STOCK = { "distributed-lock.locks.stock.wait-time=" + STOCK_WAIT,
			"distributed-lock.locks.stock.lease-time=7s" };

	private static final LockOptions TRY_ONCE = LockOptions.builder().waitTime(Duration.ZERO).build();

	private AotServices() {
	}

	/**
	 * A method with a named option set locks in the store, its option set applies (a busy
	 * lock fails after the set's wait), and the other single-key attributes work.
	 */
	static void locksThroughANamedSet(ApplicationContext context) {
		Orders orders = context.getBean(Orders.class);
		assertThat(AopUtils.isAopProxy(orders)).isTrue();
		LockTemplate template = context.getBean(LockTemplate.class);
		String sku = UUID.randomUUID().toString();
		String key = "stock:" + sku;
		Lease inside = orders.ship(sku, () -> {
			assertThat(elsewhere(() -> freeNow(template, key, TRY_ONCE))).as("free while the method runs").isFalse();
			return LockContext.current().orElseThrow();
		});
		assertThat(inside.key()).isEqualTo(key);
		assertThat(inside.isHeld()).isFalse();
		Lease other = elsewhere(() -> template.acquire(key, LockOptions.defaults()));
		try {
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> orders.ship(sku, () -> null))
				.satisfies((ex) -> assertThat(ex.getWaitTime()).isEqualTo(Duration.ofMillis(150)));
			assertThat(orders.report(key)).isEmpty();
		}
		finally {
			other.release();
		}
		assertThat(orders.report(key)).hasValueSatisfying((lease) -> assertThat(lease.key()).isEqualTo(key));
	}

	/** Fair locks, read locks and semaphores, for the stores that have them. */
	static void locksTheFamily(ApplicationContext context) {
		Catalog catalog = context.getBean(Catalog.class);
		LockTemplate template = context.getBean(LockTemplate.class);
		String id = UUID.randomUUID().toString();
		assertThat(catalog.read(id,
				() -> elsewhere(() -> freeNow(template, "catalog:" + id,
						LockOptions.builder().waitTime(Duration.ZERO).mode(LockMode.READ).build()))))
			.as("a second reader gets in")
			.isTrue();
		assertThat(catalog.export(id, () -> LockContext.current().isPresent())).isTrue();
		assertThat(catalog.fairly(id, () -> elsewhere(() -> freeNow(template, "fair:" + id, TRY_ONCE)))).isFalse();
	}

	/** Multi-key locks, for the stores that have them. */
	static void locksSeveralKeys(ApplicationContext context) {
		Transfers transfers = context.getBean(Transfers.class);
		String from = UUID.randomUUID().toString();
		String to = UUID.randomUUID().toString();
		assertThat(transfers.transfer(from, to)).containsExactlyInAnyOrder("account:" + from, "account:" + to);
	}

	private static boolean freeNow(LockTemplate template, String key, LockOptions options) {
		Optional<Lease> lease = template.tryAcquire(key, options);
		lease.ifPresent(Lease::release);
		return lease.isPresent();
	}

	/** Locks are re-entrant on their thread: a competitor runs on another. */
	private static <T> T elsewhere(Supplier<T> call) {
		try {
			return CompletableFuture.supplyAsync(call, TestThreads.EACH).get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	static class Orders {

		@DistributedLock(key = "'stock:' + #sku", name = "stock")
		public <T> T ship(String sku, Supplier<T> work) {
			return work.get();
		}

		@DistributedLock(key = "#key", waitTime = "${app.report-wait:0}", leaseTime = "5s", minHoldTime = "0",
				onFailure = OnFailure.SKIP)
		public Optional<Lease> report(String key) {
			return LockContext.current();
		}

	}

	static class Catalog {

		@DistributedLock(key = "'catalog:' + #id", mode = LockMode.READ, name = "stock")
		public <T> T read(String id, Supplier<T> work) {
			return work.get();
		}

		@DistributedLock(key = "'export:' + #id", permits = 2)
		public <T> T export(String id, Supplier<T> work) {
			return work.get();
		}

		@DistributedLock(key = "'fair:' + #id", fair = true)
		public <T> T fairly(String id, Supplier<T> work) {
			return work.get();
		}

	}

	static class Transfers {

		@DistributedLock(keys = { "'account:' + #from", "'account:' + #to" }, name = "stock")
		public List<String> transfer(String from, String to) {
			return ((MultiLease) LockContext.current().orElseThrow()).keys();
		}

	}

}
