package dev.distlock.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.StaleTokenException;
import dev.distlock.sample.load.LoadReport;
import dev.distlock.sample.order.OrderConfirmation;
import dev.distlock.sample.order.StockLevel;
import dev.distlock.sample.order.StockStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The sample's promise, end to end: two instances of the application in one JVM, real
 * servers for the stock and the locks, orders sent over HTTP to both at once. With the
 * lock no more is sold than was stocked; without it the same load oversells. The
 * instances share nothing but the servers, as separate processes would. A subclass starts
 * the servers and names each instance's arguments.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
abstract class AbstractOversellEndToEndTests {

	private static final int STOCK = 10;

	private static final int ORDERS = 200;

	private static final int CONCURRENCY = 16;

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private ConfigurableApplicationContext first;

	private ConfigurableApplicationContext second;

	/** Starts the servers the instances share. */
	abstract void startServers();

	/** Stops what {@link #startServers()} started; called even if it failed halfway. */
	abstract void stopServers();

	/** The arguments of each instance, after {@code --server.port=0}. */
	abstract List<String> instanceArguments();

	@BeforeAll
	void start() {
		startServers();
		this.first = startInstance();
		this.second = startInstance();
	}

	@AfterAll
	void stop() {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { this.second,
				this.first }) {
			if (context != null) {
				context.close();
			}
		}
		stopServers();
	}

	final ConfigurableApplicationContext first() {
		return this.first;
	}

	@Test
	void lockedOrdersNeverOversellAcrossTwoInstances() {
		LoadReport report = load("locked-sku", true);
		assertThat(report.instances()).hasSize(2);
		assertThat(report.accepted()).isEqualTo(STOCK);
		assertThat(report.rejected()).isEqualTo(ORDERS - STOCK);
		assertThat(report.failed()).isZero();
		assertThat(report.remaining()).isZero();
		assertThat(report.oversold()).isZero();
		StockLevel level = get(second, "/stock/locked-sku", StockLevel.class);
		assertThat(level.initial()).isEqualTo(STOCK);
		assertThat(level.remaining()).isZero();
		assertThat(level.accepted()).isEqualTo(STOCK);
		assertThat(level.oversold()).isZero();
	}

	@Test
	void unlockedOrdersOversellAcrossTwoInstances() {
		List<LoadReport> rounds = new ArrayList<>();
		for (int round = 0; round < 5 && rounds.stream().noneMatch((r) -> r.oversold() > 0); round++) {
			rounds.add(load("unlocked-sku", false));
		}
		assertThat(rounds).anySatisfy((report) -> {
			assertThat(report.accepted()).isGreaterThan(STOCK);
			assertThat(report.oversold()).isEqualTo(report.accepted() - STOCK);
		});
	}

	@Test
	void lockedOrdersWriteWithRisingFencingTokens() {
		send(first, "PUT", "/stock/fenced-sku?quantity=3", 200);
		List<Long> tokens = new ArrayList<>();
		for (ConfigurableApplicationContext instance : List.of(first, second, first)) {
			OrderConfirmation order = read(send(instance, "POST", "/orders?sku=fenced-sku&lock=true", 200),
					OrderConfirmation.class);
			assertThat(order.locked()).isTrue();
			tokens.add(order.fencingToken());
		}
		assertThat(tokens).doesNotContainNull().isSorted().doesNotHaveDuplicates();
		assertThat(get(second, "/stock/fenced-sku", StockLevel.class).fence()).isEqualTo(tokens.get(2));
		send(second, "POST", "/orders?sku=fenced-sku&lock=true", 409);
	}

	@Test
	void stockWriteWithAStaleFencingTokenIsRejected() {
		send(first, "PUT", "/stock/stale-sku?quantity=5", 200);
		OrderConfirmation order = read(send(second, "POST", "/orders?sku=stale-sku", 200), OrderConfirmation.class);
		StockStore store = first.getBean(StockStore.class);
		assertThatExceptionOfType(StaleTokenException.class)
			.isThrownBy(() -> store.take("stale-sku", 0, order.fencingToken() - 1));
		StockLevel level = store.level("stale-sku");
		assertThat(level.remaining()).isEqualTo(4);
		assertThat(level.accepted()).isEqualTo(1);
	}

	private ConfigurableApplicationContext startInstance() {
		List<String> args = new ArrayList<>();
		args.add("--server.port=0");
		args.addAll(instanceArguments());
		return new SpringApplicationBuilder(SampleApplication.class).run(args.toArray(String[]::new));
	}

	private LoadReport load(String sku, boolean lock) {
		String query = "/load?sku=" + sku + "&stock=" + STOCK + "&orders=" + ORDERS + "&concurrency=" + CONCURRENCY
				+ "&lock=" + lock + "&peers=" + baseUrl(second);
		return read(send(first, "POST", query, 200), LoadReport.class);
	}

	private static <T> T get(ConfigurableApplicationContext instance, String path, Class<T> type) {
		return read(send(instance, "GET", path, 200), type);
	}

	private static String send(ConfigurableApplicationContext instance, String method, String path,
			int expectedStatus) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl(instance) + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
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

	private static String baseUrl(ConfigurableApplicationContext instance) {
		return "http://localhost:" + instance.getEnvironment().getProperty("local.server.port");
	}

}
