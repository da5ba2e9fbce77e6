package dev.distlock.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's Actuator, as an operator would use it: while an order is in progress (a
 * slow one, so that it can be seen), {@code /actuator/distributedlocks} shows the SKU's
 * lock held by the request's thread under the name {@code stock}; afterwards
 * {@code /actuator/metrics} has the lock's meters and {@code /actuator/health} is up.
 */
@Tag("server")
class ActuatorEndToEndTests {

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static final JsonMapper json = JsonMapper.builder().build();

	private static RedisServer redis;

	private static ConfigurableApplicationContext instance;

	@BeforeAll
	static void start() {
		redis = RedisServer.start();
		instance = new SpringApplicationBuilder(SampleApplication.class).run("--server.port=0",
				"--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
				"--sample.work-pause=2s");
	}

	@AfterAll
	static void stop() {
		if (instance != null) {
			instance.close();
		}
		if (redis != null) {
			redis.close();
		}
	}

	@Test
	@SuppressWarnings("unchecked")
	void theEndpointShowsTheLockOfAnOrderInProgress() throws Exception {
		send("PUT", "/stock/actuator-sku?quantity=5");
		CompletableFuture<String> order = CompletableFuture.supplyAsync(() -> send("POST", "/orders?sku=actuator-sku"),
				TestThreads.EACH);
		Map<String, Object>[] seen = new Map[1];
		Conditions.await("the order's lock in /actuator/distributedlocks", Duration.ofSeconds(20), () -> {
			Map<String, Object> body = json.readValue(send("GET", "/actuator/distributedlocks"), Map.class);
			seen[0] = body;
			return !((List<?>) body.get("held")).isEmpty();
		});
		System.out.println("GET /actuator/distributedlocks during an order:\n" + json.writeValueAsString(seen[0]));
		Map<String, Object> held = ((List<Map<String, Object>>) seen[0].get("held")).get(0);
		assertThat(held).containsEntry("key", "stock:actuator-sku").containsEntry("name", "stock");
		assertThat((List<String>) held.get("holderThreads")).singleElement().asString().startsWith("http-nio-");
		assertThat(seen[0]).containsEntry("store", "redis");
		assertThat(order.get(20, TimeUnit.SECONDS)).contains("actuator-sku");
		assertThat((List<?>) json.readValue(send("GET", "/actuator/distributedlocks"), Map.class).get("held"))
			.isEmpty();
		Map<String, Object> acquire = json.readValue(send("GET", "/actuator/metrics/distributed.lock.acquire"),
				Map.class);
		System.out.println("GET /actuator/metrics/distributed.lock.acquire:\n" + json.writeValueAsString(acquire));
		assertThat(acquire).containsEntry("name", "distributed.lock.acquire");
		assertThat(json.readValue(send("GET", "/actuator/metrics"), Map.class).get("names").toString())
			.contains("distributed.lock.leases.held", "distributed.lock.hold", "distributed.lock.renewal.round.trips");
		assertThat(send("GET", "/actuator/health")).contains("\"UP\"");
	}

	private static String send(String method, String path) {
		int port = instance.getEnvironment().getProperty("local.server.port", Integer.class);
		try {
			HttpResponse<String> response = http
				.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
					.method(method, HttpRequest.BodyPublishers.noBody())
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(method + " " + path + ": " + response.body()).isEqualTo(200);
			return response.body();
		}
		catch (Exception ex) {
			throw new IllegalStateException(method + " " + path, ex);
		}
	}

}
