package dev.distlock.sample.webflux;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.sample.webflux.purchase.Purchase;
import dev.distlock.sample.webflux.stock.StockLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample's promise, end to end: two instances in JVMs of their own, one real
 * redis-server for the stock and the locks, purchases sent over HTTP to both at once.
 * With the lock exactly the stock is sold; without it the same load oversells, which
 * shows the test can fail.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
class TwoInstanceOversellTests {

	private static final int STOCK = 20;

	/** Purchases per load, half to each instance, all in flight at once. */
	private static final int PURCHASES = 200;

	private static final Duration STARTUP = Duration.ofMinutes(3);

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private RedisServer redis;

	private final List<ChildJvm> instances = new ArrayList<>();

	private final List<String> baseUrls = new ArrayList<>();

	@BeforeAll
	void start() throws InterruptedException {
		this.redis = RedisServer.start();
		for (int i = 0; i < 2; i++) {
			this.instances.add(ChildJvm.start(SampleInstance.class, "--server.port=0",
					"--spring.data.redis.host=" + this.redis.host(), "--spring.data.redis.port=" + this.redis.port()));
		}
		for (ChildJvm instance : this.instances) {
			String port = instance.awaitLine(SampleInstance.READY, STARTUP).substring(SampleInstance.READY.length());
			this.baseUrls.add("http://127.0.0.1:" + port);
		}
	}

	@AfterAll
	void stop() throws InterruptedException {
		for (ChildJvm instance : this.instances) {
			instance.close();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Test
	void lockedPurchasesSellExactlyTheStockAcrossTwoInstances() {
		Load load = load("locked-sku", true);
		System.out.println("locked: " + load);
		assertThat(load.statuses()).containsOnlyKeys(200, 409);
		List<Purchase> sold = load.sold();
		assertThat(sold).hasSize(STOCK);
		assertThat(sold).allSatisfy((purchase) -> {
			assertThat(purchase.locked()).isTrue();
			assertThat(purchase.remaining()).isNotNegative();
		});
		assertThat(sold).extracting(Purchase::saleNumber)
			.containsExactlyInAnyOrderElementsOf(LongStream.rangeClosed(1, STOCK).boxed().toList());
		assertThat(sold).extracting(Purchase::fencingToken).doesNotContainNull().doesNotHaveDuplicates();
		assertThat(load.servedBy()).as("purchases sold by each instance").hasSize(2);
		for (String baseUrl : this.baseUrls) {
			StockLevel level = level(baseUrl, "locked-sku");
			assertThat(level.remaining()).isZero();
			assertThat(level.sold()).isEqualTo(STOCK);
			assertThat(level.oversold()).isZero();
		}
	}

	@Test
	void unlockedPurchasesOversellAcrossTwoInstances() {
		List<Load> rounds = new ArrayList<>();
		for (int round = 0; round < 3 && rounds.stream().noneMatch((load) -> load.sold().size() > STOCK); round++) {
			rounds.add(load("unlocked-sku", false));
		}
		System.out.println("unlocked: " + rounds);
		assertThat(rounds).anySatisfy((load) -> {
			assertThat(load.sold().size()).isGreaterThan(STOCK);
			assertThat(load.level().oversold()).isEqualTo(load.sold().size() - STOCK);
		});
	}

	/**
	 * Stocks {@code sku} and sends {@link #PURCHASES} purchases of it, alternating
	 * between the instances, all at once; waits for every answer.
	 */
	private Load load(String sku, boolean locking) {
		send(this.baseUrls.get(0), "PUT", "/skus/" + sku + "/stock?quantity=" + STOCK, 200);
		List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < PURCHASES; i++) {
			String baseUrl = this.baseUrls.get(i % 2);
			HttpRequest request = HttpRequest
				.newBuilder(URI.create(baseUrl + "/skus/" + sku + "/purchase?locking=" + locking))
				.POST(HttpRequest.BodyPublishers.noBody())
				.build();
			responses.add(this.http.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
		}
		CompletableFuture.allOf(responses.toArray(CompletableFuture[]::new)).join();
		List<HttpResponse<String>> answers = responses.stream().map(CompletableFuture::join).toList();
		Map<Integer, Long> statuses = answers.stream()
			.collect(Collectors.groupingBy(HttpResponse::statusCode, Collectors.counting()));
		List<HttpResponse<String>> ok = answers.stream().filter((answer) -> answer.statusCode() == 200).toList();
		Map<String, Long> servedBy = ok.stream()
			.collect(Collectors.groupingBy((answer) -> answer.uri().getAuthority(), Collectors.counting()));
		List<Purchase> sold = ok.stream().map((answer) -> read(answer.body(), Purchase.class)).toList();
		return new Load(statuses, sold, servedBy, level(this.baseUrls.get(1), sku));
	}

	private StockLevel level(String baseUrl, String sku) {
		return read(send(baseUrl, "GET", "/skus/" + sku, 200), StockLevel.class);
	}

	private String send(String baseUrl, String method, String path, int expectedStatus) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as("%s %s: %s", method, path, response.body()).isEqualTo(expectedStatus);
			return response.body();
		}
		catch (IOException ex) {
			throw new IllegalStateException(method + " " + path + " failed", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static <T> T read(String json, Class<T> type) {
		return JsonMapper.shared().readValue(json, type);
	}

	/**
	 * One load's outcome: the count of each HTTP status, the purchases sold, how many
	 * each instance sold, and the stock record afterwards.
	 */
	private record Load(Map<Integer, Long> statuses, List<Purchase> sold, Map<String, Long> servedBy,
			StockLevel level) {

		@Override
		public String toString() {
			return "statuses " + this.statuses + ", sold " + this.sold.size() + " by instance " + this.servedBy
					+ ", stock " + this.level;
		}

	}

}
