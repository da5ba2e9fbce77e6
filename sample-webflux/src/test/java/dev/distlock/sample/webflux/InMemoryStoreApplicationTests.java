package dev.distlock.sample.webflux;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.sample.webflux.purchase.Purchase;
import dev.distlock.sample.webflux.stock.InMemoryStockStore;
import dev.distlock.sample.webflux.stock.StockLevel;
import dev.distlock.sample.webflux.stock.StockStore;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With no Redis configured, as on a fresh machine, the sample starts with its stock and
 * its locks in memory and sells through its reactive endpoints, under the lock by
 * default.
 */
// Starts the whole application and its web server on a port.
@Tag("server")
class InMemoryStoreApplicationTests {

	@Test
	void startsAndSellsInMemoryWhenNoRedisIsConfigured() {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(WebfluxSampleApplication.class)
			.run("--server.port=0")) {
			assertThat(context.getBean(StockStore.class)).isInstanceOf(InMemoryStockStore.class);
			assertThat(context.getBean(LockProvider.class)).isInstanceOf(InMemoryLockProvider.class);
			WebTestClient client = WebTestClient.bindToApplicationContext(context).build();
			client.put().uri("/skus/book/stock?quantity=2").exchange().expectStatus().isOk();
			for (long remaining = 1; remaining >= 0; remaining--) {
				Purchase purchase = client.post()
					.uri("/skus/book/purchase")
					.exchange()
					.expectStatus()
					.isOk()
					.expectBody(Purchase.class)
					.returnResult()
					.getResponseBody();
				assertThat(purchase.locked()).isTrue();
				assertThat(purchase.fencingToken()).isNotNull();
				assertThat(purchase.remaining()).isEqualTo(remaining);
			}
			client.post().uri("/skus/book/purchase").exchange().expectStatus().isEqualTo(409);
			client.post().uri("/skus/book/purchase?locking=false").exchange().expectStatus().isEqualTo(409);
			client.post().uri("/skus/nothing/purchase").exchange().expectStatus().isNotFound();
			StockLevel level = client.get()
				.uri("/skus/book")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(StockLevel.class)
				.returnResult()
				.getResponseBody();
			assertThat(level.sold()).isEqualTo(2);
			assertThat(level.oversold()).isZero();
		}
	}

}
