package dev.distlock.docs;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.OnFailure;
import dev.distlock.config.EnableDistributedLocks;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

/**
 * The code of {@code docs/usage.md}.
 */
class UsagePage {

	LockTemplate lockTemplate;

	LockTemplate locks;

	AsyncLockTemplate asyncLocks;

	BatchStore store;

	Inventory inventory;

	// @formatter:off
	@Service
	class StockService {

		@DistributedLock(key = "'order:' + #order.id", waitTime = "2s", leaseTime = "10s")
		public void ship(Order order) { }

		@DistributedLock(key = "'nightly-report'", onFailure = OnFailure.SKIP)
		@Scheduled(cron = "0 0 2 * * *")
		public void nightlyReport() { }                         // runs on one instance; the others skip
	}
	// @formatter:on

	void writeBatch(String day, Object batch) {
		// @formatter:off
		try (Lease lease = lockTemplate.acquire("batch:" + day, LockOptions.builder()
				.waitTime(Duration.ZERO).leaseTime(Duration.ofMinutes(2)).build())) {
			store.write(batch, lease.fencingToken());          // let the store reject stale holders
		}
		// @formatter:on
	}

	void reserve(String sku, int quantity) {
		// @formatter:off
		asyncLocks.execute("sku:" + sku, () -> inventory.reserve(sku, quantity))   // inventory returns a CompletionStage
			.thenAccept(reservation -> inventory.confirm(reservation));
		// @formatter:on
	}

	void openScope(String key, LockOptions options) {
		// @formatter:off
		try (Lease lease = locks.acquire(key, options); LockContext.Scope scope = LockContext.open(lease)) {
			inventory.count();
		}
		// @formatter:on
	}

	// @formatter:off
	@Configuration
	@EnableDistributedLocks                      // dev.distlock.config; order, allowTypeReferencesInKeys
	class LockConfig {

		@Bean(destroyMethod = "close")
		RenewalScheduler renewalScheduler() {
			return new RenewalScheduler();
		}

		@Bean(destroyMethod = "close")
		DefaultLockTemplate lockTemplate(RedisConnectionFactory redis, RenewalScheduler scheduler) {
			return new DefaultLockTemplate(new RedisLockProvider(redis, "lock:", false), scheduler,
					LockOptions.builder().waitTime(Duration.ofSeconds(5)).leaseTime(Duration.ofSeconds(30))
						.autoRenew(true).retryInterval(Duration.ofMillis(100)).build());
		}

	}
	// @formatter:on

	record Order(long id) {
	}

	record Reservation() {
	}

	interface BatchStore {

		void write(Object batch, long token);

	}

	interface Inventory {

		CompletionStage<Reservation> reserve(String sku, int quantity);

		void confirm(Reservation reservation);

		void count();

	}

}
