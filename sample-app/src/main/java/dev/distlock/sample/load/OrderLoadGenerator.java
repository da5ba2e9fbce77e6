package dev.distlock.sample.load;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.springframework.stereotype.Component;

/**
 * Fires orders over HTTP at several instances at once, so that the race between them is
 * real: separate JVMs, separate connection pools, one Redis. Orders are spread round
 * robin over the instances and sent from a fixed number of threads.
 */
@Component
public class OrderLoadGenerator {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	/**
	 * Sends {@code orders} order requests for {@code sku} and counts the answers.
	 * @param instances base URLs such as {@code http://localhost:8080}
	 */
	public Tally fire(List<String> instances, String sku, int orders, int concurrency, boolean lock) {
		String query = "/orders?sku=" + URLEncoder.encode(sku, StandardCharsets.UTF_8) + "&lock=" + lock;
		ExecutorService threads = Executors.newFixedThreadPool(concurrency);
		try {
			List<Future<Integer>> answers = new ArrayList<>(orders);
			for (int i = 0; i < orders; i++) {
				URI uri = URI.create(instances.get(i % instances.size()) + query);
				answers.add(threads.submit(() -> send(uri)));
			}
			Tally tally = new Tally();
			for (Future<Integer> answer : answers) {
				tally.count(answer.get());
			}
			return tally;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for orders", ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("Sending an order failed", ex.getCause());
		}
		finally {
			threads.shutdownNow();
		}
	}

	/** The HTTP status of one order, or 0 if the instance could not be reached. */
	private int send(URI uri) throws InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(uri)
			.POST(HttpRequest.BodyPublishers.noBody())
			.timeout(REQUEST_TIMEOUT)
			.build();
		try {
			return this.http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
		}
		catch (IOException ex) {
			return 0;
		}
	}

	/** Counts of order outcomes; filled by one thread. */
	public static final class Tally {

		private int accepted;

		private int rejected;

		private int failed;

		void count(int status) {
			if (status == 200) {
				this.accepted++;
			}
			else if (status == 409) {
				this.rejected++;
			}
			else {
				this.failed++;
			}
		}

		public int accepted() {
			return this.accepted;
		}

		public int rejected() {
			return this.rejected;
		}

		public int failed() {
			return this.failed;
		}

	}

}
