package dev.distlock.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.harness.redis.RedisServer;
import dev.distlock.sample.segmented.SegmentedStockLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The segmented-stock endpoint end to end: two instances sharing one real redis-server,
 * 16 buyers sending orders to both at once until the stock is gone. Every unit is sold
 * exactly once: no oversell, no segment below zero, and orders larger than a segment are
 * served from several segments together.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
class SegmentedStockEndToEndTests {

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private RedisServer redis;

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	@BeforeAll
	void start() {
		this.redis = RedisServer.start();
		for (int i = 0; i < 2; i++) {
			this.instances.add(new SpringApplicationBuilder(SampleApplication.class).run("--server.port=0",
					"--spring.data.redis.host=" + this.redis.host(), "--spring.data.redis.port=" + this.redis.port()));
		}
	}

	@AfterAll
	void stop() {
		this.instances.forEach(ConfigurableApplicationContext::close);
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void sixteenBuyersOnTwoInstancesSellEveryUnitOnce() throws Exception {
		int stock = 60;
		assertThat(send(0, "PUT", "/segmented-stock/hot?quantity=" + stock + "&segments=8")).isEqualTo(200);
		AtomicInteger sold = new AtomicInteger();
		AtomicInteger unexpected = new AtomicInteger();
		ExecutorService buyers = Executors.newFixedThreadPool(16);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int b = 0; b < 16; b++) {
				int buyer = b;
				done.add(buyers.submit(() -> {
					int quantity = (buyer % 4 == 0) ? 20 : 1;
					for (int i = 0; i < 15; i++) {
						int status = send(buyer % 2, "POST", "/segmented-orders?sku=hot&quantity=" + quantity);
						if (status == 200) {
							sold.addAndGet(quantity);
						}
						else if (status != 409 && status != 503) {
							unexpected.incrementAndGet();
						}
					}
				}));
			}
			for (Future<?> future : done) {
				future.get(120, TimeUnit.SECONDS);
			}
		}
		finally {
			buyers.shutdownNow();
		}
		SegmentedStockLevel level = JsonMapper.shared()
			.readValue(body(1, "/segmented-stock/hot"), SegmentedStockLevel.class);
		assertThat(unexpected).hasValue(0);
		assertThat(level.oversold()).isZero();
		assertThat(level.negativeSegment()).isFalse();
		assertThat(level.accepted()).isEqualTo(sold.get());
		assertThat(level.accepted() + level.remaining()).isEqualTo(stock);
		assertThat(level.remaining()).as("16 x 15 orders ask for far more than the stock").isLessThan(20);
	}

	@Test
	void anOrderLargerThanAnySegmentTakesSeveral() {
		assertThat(send(0, "PUT", "/segmented-stock/big?quantity=8&segments=4")).isEqualTo(200);
		assertThat(send(1, "POST", "/segmented-orders?sku=big&quantity=5")).isEqualTo(200);
		assertThat(send(0, "POST", "/segmented-orders?sku=big&quantity=4")).isEqualTo(409);
		assertThat(send(0, "POST", "/segmented-orders?sku=big&quantity=3")).isEqualTo(200);
		assertThat(send(1, "POST", "/segmented-orders?sku=big&quantity=1")).isEqualTo(409);
	}

	private int send(int instance, String method, String path) {
		return exchange(instance, method, path).statusCode();
	}

	private String body(int instance, String path) {
		return exchange(instance, "GET", path).body();
	}

	private HttpResponse<String> exchange(int instance, String method, String path) {
		String port = this.instances.get(instance).getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			return http.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(method + " " + path + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
