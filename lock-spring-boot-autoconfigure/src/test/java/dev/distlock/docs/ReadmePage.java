package dev.distlock.docs;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.OnFailure;

import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;

/**
 * The code of {@code README.md}.
 */
class ReadmePage {

	LockTemplate lockTemplate;

	BatchStore store;

	// @formatter:off
	@Service
	class StockService {

		@DistributedLock(key = "#sku", name = "stock")              // options from distributed-lock.locks.stock
		public void reserve(String sku, int quantity) { }

		@DistributedLock(key = "'nightly-report'", onFailure = OnFailure.SKIP)
		@Scheduled(cron = "0 0 2 * * *")
		public void nightlyReport() { }                         // runs on one instance; the others skip
	}
	// @formatter:on

	void writeBatch(String day, Object batch) {
		// @formatter:off
		try (Lease lease = lockTemplate.acquire("batch:" + day, LockOptions.defaults())) {
			store.write(batch, lease.fencingToken());          // the store rejects stale holders
		}
		// @formatter:on
	}

	interface BatchStore {

		void write(Object batch, long token);

	}

}
