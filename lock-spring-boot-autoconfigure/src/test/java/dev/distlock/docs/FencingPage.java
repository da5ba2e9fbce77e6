package dev.distlock.docs;

import dev.distlock.DistributedLock;
import dev.distlock.LockContext;
import dev.distlock.jdbc.JdbcFence;
import dev.distlock.redis.FencedValue;
import dev.distlock.redis.RedisFencedValues;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The code of {@code docs/fencing.md}.
 */
class FencingPage {

	// @formatter:off
	@Service
	class StockService {

		private final JdbcFence fence;
		private final JdbcClient jdbc;

		StockService(JdbcFence fence, JdbcClient jdbc) { this.fence = fence; this.jdbc = jdbc; }

		@DistributedLock(key = "'stock:' + #sku")
		@Transactional
		public void setStock(String sku, int quantity) {
			long token = LockContext.current().orElseThrow().fencingToken();
			fence.check("stock:" + sku, token);                     // throws StaleTokenException
			jdbc.sql("UPDATE stock SET quantity = ? WHERE sku = ?").params(quantity, sku).update();
		}
	}
	// @formatter:on

	// @formatter:off
	@Service
	class PriceService {

		private final RedisFencedValues values;

		PriceService(RedisFencedValues values) { this.values = values; }

		@DistributedLock(key = "'price:' + #sku")
		public void reprice(String sku) {
			long token = LockContext.current().orElseThrow().fencingToken();
			FencedValue current = values.get("price:" + sku);     // value and highest token, or null
			String price = computePrice(sku, current);
			values.set("price:" + sku, price, token);             // throws StaleTokenException
			// or only over the value read: false when it changed
			// values.compareAndSet("price:" + sku, (current != null) ? current.value() : null, price, token);
		}
	}
	// @formatter:on

	String computePrice(String sku, FencedValue current) {
		throw new UnsupportedOperationException();
	}

}
