package dev.distlock.sample.demo;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.sample.order.OrderService;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The demo page's data ({@code /index.html} plots it): {@code POST /demo/runs} starts a
 * run of the oversell demo in the background and answers {@code 202} with its first
 * snapshot; {@code GET /demo/runs/{id}} answers its progress, polled by the page until
 * {@code done}. One run at a time; the last few are kept.
 */
@RestController
public class DemoController implements DisposableBean {

	private static final int KEPT_RUNS = 20;

	private final OrderService orders;

	private final TimedOrders timed;

	private final ExecutorService runner = Executors.newSingleThreadExecutor();

	private final AtomicLong ids = new AtomicLong();

	private final Map<Long, DemoRun> runs = new LinkedHashMap<>();

	public DemoController(OrderService orders, TimedOrders timed) {
		this.orders = orders;
		this.timed = timed;
	}

	/** Starts a run; runs queue behind one another. */
	@PostMapping("/demo/runs")
	public ResponseEntity<DemoSnapshot> start(@RequestParam(defaultValue = "true") boolean lock,
			@RequestParam(defaultValue = "20") long stock, @RequestParam(defaultValue = "200") int orders,
			@RequestParam(defaultValue = "16") int concurrency) {
		check(stock >= 0 && stock <= 1_000, "stock must be between 0 and 1000 but was " + stock);
		check(orders >= 1 && orders <= 2_000, "orders must be between 1 and 2000 but was " + orders);
		check(concurrency >= 1 && concurrency <= 64, "concurrency must be between 1 and 64 but was " + concurrency);
		DemoRun run = new DemoRun(this.ids.incrementAndGet(), lock, stock, orders, concurrency);
		synchronized (this.runs) {
			this.runs.put(run.id(), run);
			if (this.runs.size() > KEPT_RUNS) {
				this.runs.remove(this.runs.keySet().iterator().next());
			}
		}
		this.runner.execute(() -> run.run(this.orders, this.timed));
		return ResponseEntity.status(HttpStatus.ACCEPTED).body(run.snapshot());
	}

	/** A run's progress so far. */
	@GetMapping("/demo/runs/{id}")
	public ResponseEntity<DemoSnapshot> progress(@PathVariable long id) {
		DemoRun run;
		synchronized (this.runs) {
			run = this.runs.get(id);
		}
		return (run != null) ? ResponseEntity.ok(run.snapshot()) : ResponseEntity.notFound().build();
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	@Override
	public void destroy() {
		this.runner.shutdownNow();
	}

	private static void check(boolean condition, String message) {
		if (!condition) {
			throw new IllegalArgumentException(message);
		}
	}

}
