package dev.distlock.sample.webflux.stock;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

/**
 * Picks the stock store named by {@code sample.store}: {@code redis} (the default when a
 * Redis connection is configured) or {@code in-memory}.
 */
@Configuration(proxyBeanMethods = false)
class StockStoreConfiguration {

	@Bean
	@ConditionalOnProperty(name = "sample.store", havingValue = "redis", matchIfMissing = true)
	StockStore redisStockStore(ReactiveStringRedisTemplate redis) {
		return new RedisStockStore(redis);
	}

	@Bean
	@ConditionalOnProperty(name = "sample.store", havingValue = "in-memory")
	StockStore inMemoryStockStore() {
		return new InMemoryStockStore();
	}

}
