package dev.distlock.sample.load;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.sample.order.OrderService;
import dev.distlock.sample.order.StockLevel;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /load}: restocks a SKU, fires many concurrent orders at this instance and
 * its peers, and reports whether more was sold than stocked. One call shows the lock at
 * work across instances:
 *
 * <pre>
 * curl -X POST 'localhost:8080/load?sku=book&amp;lock=true&amp;peers=http://localhost:8081'
 * </pre>
 */
@RestController
public class LoadController {

	private final OrderService orders;

	private final OrderLoadGenerator generator;

	public LoadController(OrderService orders, OrderLoadGenerator generator) {
		this.orders = orders;
		this.generator = generator;
	}

	/**
	 * Runs one load round.
	 * @param peers base URLs of other instances sharing the same Redis, comma-separated;
	 * none runs the round against this instance alone
	 */
	@PostMapping("/load")
	public LoadReport load(@RequestParam String sku, @RequestParam(defaultValue = "10") long stock,
			@RequestParam(defaultValue = "200") int orders, @RequestParam(defaultValue = "16") int concurrency,
			@RequestParam(defaultValue = "true") boolean lock, @RequestParam(defaultValue = "") List<String> peers,
			HttpServletRequest request) {
		check(orders >= 1 && orders <= 10_000, "orders must be between 1 and 10000 but was " + orders);
		check(concurrency >= 1 && concurrency <= 256, "concurrency must be between 1 and 256 but was " + concurrency);
		List<String> instances = new ArrayList<>();
		instances.add("http://localhost:" + request.getLocalPort());
		peers.stream().filter((peer) -> !peer.isBlank()).map(LoadController::baseUrl).forEach(instances::add);
		long start = System.nanoTime();
		this.orders.restock(sku, stock);
		OrderLoadGenerator.Tally tally = this.generator.fire(instances, sku, orders, concurrency, lock);
		StockLevel level = this.orders.stock(sku);
		return new LoadReport(sku, stock, orders, tally.accepted(), tally.rejected(), tally.failed(), level.remaining(),
				level.oversold(), lock, instances, (System.nanoTime() - start) / 1_000_000);
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	private static String baseUrl(String peer) {
		String url = peer.strip();
		while (url.endsWith("/")) {
			url = url.substring(0, url.length() - 1);
		}
		URI uri = URI.create(url);
		check(("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null,
				"peer must be a base URL such as http://localhost:8081 but was '" + peer + "'");
		return url;
	}

	private static void check(boolean condition, String message) {
		if (!condition) {
			throw new IllegalArgumentException(message);
		}
	}

}
