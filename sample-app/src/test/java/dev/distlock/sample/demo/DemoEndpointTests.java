package dev.distlock.sample.demo;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.distlock.contract.Conditions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo page's data endpoint on a running sample (its own {@code redis-server}): a run
 * without the lock oversells, a run with it sells exactly the stock, and each reports
 * every order with its lock wait. Also that the page itself is served.
 */
@Tag("server")
class DemoEndpointTests {

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static RunningSample sample;

	@BeforeAll
	static void start() {
		sample = new RunningSample();
	}

	@AfterAll
	static void stop() {
		if (sample != null) {
			sample.close();
		}
	}

	@Test
	void servesThePage() {
		HttpResponse<String> page = send("GET", "/");
		assertThat(page.statusCode()).isEqualTo(200);
		assertThat(page.body()).contains("id=\"run\"", "demo.js");
		assertThat(send("GET", "/demo.js").body()).contains("/demo/runs".substring(1));
	}

	@Test
	void withoutTheLockTheRunOversellsAndWithItSellsExactlyTheStock() {
		DemoSnapshot unlocked = run(false);
		assertThat(unlocked.oversold()).as("oversold without the lock").isPositive();
		assertThat(unlocked.outcomes()).hasSize(200).allMatch((o) -> o.lockWaitMillis() == 0);
		DemoSnapshot locked = run(true);
		assertThat(locked.oversold()).isZero();
		assertThat(locked.accepted()).isEqualTo(10);
		assertThat(locked.remaining()).isZero();
		assertThat(locked.soldOut() + locked.accepted() + locked.failed()).isEqualTo(200);
		assertThat(locked.outcomes()).hasSize(200).anyMatch((o) -> o.lockWaitMillis() > 0);
	}

	@Test
	void rejectsBadRunsAndUnknownIds() {
		HttpResponse<String> bad = send("POST", "/demo/runs?orders=0");
		assertThat(bad.statusCode()).isEqualTo(400);
		assertThat(bad.body()).contains("orders must be between 1 and 2000 but was 0");
		assertThat(send("GET", "/demo/runs/999999").statusCode()).isEqualTo(404);
	}

	private static DemoSnapshot run(boolean lock) {
		HttpResponse<String> started = send("POST", "/demo/runs?lock=" + lock + "&stock=10&orders=200&concurrency=16");
		assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
		long id = read(started.body()).id();
		DemoSnapshot[] last = new DemoSnapshot[1];
		Conditions.await("demo run " + id + " finishes", Duration.ofSeconds(60), () -> {
			last[0] = read(send("GET", "/demo/runs/" + id).body());
			return last[0].done();
		});
		assertThat(last[0].error()).isNull();
		return last[0];
	}

	private static DemoSnapshot read(String json) {
		return JsonMapper.shared().readValue(json, DemoSnapshot.class);
	}

	private static HttpResponse<String> send(String method, String path) {
		HttpRequest request = HttpRequest.newBuilder(URI.create(sample.baseUrl() + path))
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
