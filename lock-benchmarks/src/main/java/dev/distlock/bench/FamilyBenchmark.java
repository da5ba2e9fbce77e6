package dev.distlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import dev.distlock.DistributedLatch;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.harness.redis.RedisServer;
import org.redisson.api.RCountDownLatch;
import org.redisson.api.RLock;

/**
 * The wire cost of distlock's multi-key lock and countdown latch against Redisson's
 * {@code RedissonMultiLock} and {@code RCountDownLatch} on one {@code redis-server}, and
 * the hot-inventory scenario: accepted orders per second from 2 JVMs x 16 threads under
 * one lock against a {@link dev.distlock.SegmentedLock}, with the oversell counted.
 * Writes Markdown. Run with {@code ./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark
 * -Dbench.redis.skip=true -Dbench.jdbc.skip=true -Dbench.zookeeper.skip=true}.
 */
public final class FamilyBenchmark {

	private static final int CYCLES = Integer.getInteger("bench.family.cycles", 1000);

	private static final int STOCK = Integer.getInteger("bench.family.stock", 2000);

	private static final int ROUNDS = Integer.getInteger("bench.family.rounds", 3);

	private static final int THREADS = 16;

	private final int port;

	private final StringBuilder report = new StringBuilder();

	private FamilyBenchmark(int port) {
		this.port = port;
	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS-multi.md");
		try (RedisServer redis = RedisServer.start()) {
			FamilyBenchmark benchmark = new FamilyBenchmark(redis.port());
			benchmark.report.append("# Multi-key locks, latches and segmented stock: benchmark results\n\n")
				.append("Run on ")
				.append(LocalDate.now())
				.append(": ")
				.append(Runtime.getRuntime().availableProcessors())
				.append(" cores, JDK ")
				.append(System.getProperty("java.version"))
				.append(", redis-server ")
				.append(redis.version())
				.append(" on loopback, started by the harness; other builds may share the machine. Command: ")
				.append("`./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark -Dbench.redis.skip=true")
				.append(" -Dbench.jdbc.skip=true -Dbench.zookeeper.skip=true` (`FamilyBenchmark`).\n\n");
			benchmark.wireCost();
			benchmark.segmentedStock();
			Files.writeString(output, benchmark.report);
			System.out.println(benchmark.report);
			System.out.println("Written to " + output.toAbsolutePath());
		}
		System.exit(0);
	}

	/** Client commands (MONITOR) and all commands (INFO commandstats) per operation. */
	private void wireCost() throws Exception {
		StringBuilder rows = new StringBuilder();
		try (Lib.Distlock distlock = new Lib.Distlock(this.port, Duration.ofSeconds(30));
				Lib.RedissonLib redisson = new Lib.RedissonLib(this.port, 30_000);
				Lib.Raw raw = new Lib.Raw(this.port)) {
			List<String> three = List.of("a", "b", "c");
			rows.append(row("multi-key lock, 3 keys: acquire + release", "distlock", raw, (i) -> {
				MultiLease lease = distlock.template.acquireAll(three.stream().map((k) -> "m" + k).toList(),
						LockOptions.defaults());
				lease.release();
			}));
			rows.append(row("multi-key lock, 3 keys: acquire + release", "redisson", raw, (i) -> {
				RLock multi = redisson.client.getMultiLock(redisson.client.getLock("rm-a"),
						redisson.client.getLock("rm-b"), redisson.client.getLock("rm-c"));
				multi.lock();
				multi.unlock();
			}));
			rows.append(row("latch of 3: arm, 3 count-downs, await (open)", "distlock", raw, (i) -> {
				DistributedLatch latch = distlock.template.latch("l-" + i, 3, Duration.ofMinutes(1));
				latch.countDown("p1");
				latch.countDown("p2");
				latch.countDown("p3");
				if (!latch.await(Duration.ofSeconds(5))) {
					throw new IllegalStateException("latch did not open");
				}
			}));
			rows.append(row("latch of 3: arm, 3 count-downs, await (open)", "redisson", raw, (i) -> {
				RCountDownLatch latch = redisson.client.getCountDownLatch("rl-" + i);
				latch.trySetCount(3);
				latch.countDown();
				latch.countDown();
				latch.countDown();
				if (!latch.await(5, TimeUnit.SECONDS)) {
					throw new IllegalStateException("latch did not open");
				}
			}));
			rows.append(row("latch: a retried count-down (same participant twice)", "distlock", raw, (i) -> {
				DistributedLatch latch = distlock.template.latch("r-" + i, 2, Duration.ofMinutes(1));
				latch.countDown("p1");
				if (latch.countDown("p1") != DistributedLatch.CountDown.ALREADY_COUNTED || latch.getCount() != 1) {
					throw new IllegalStateException("a retried count-down counted twice");
				}
			}));
			rows.append(row("latch: a retried count-down (countDown twice)", "redisson", raw, (i) -> {
				RCountDownLatch latch = redisson.client.getCountDownLatch("rr-" + i);
				latch.trySetCount(2);
				latch.countDown();
				latch.countDown();
				if (latch.getCount() != 0) {
					throw new IllegalStateException("expected Redisson to count the retry");
				}
			}));
		}
		this.report.append("## Wire cost per operation\n\n")
			.append(CYCLES)
			.append(" operations each, one thread, no contention. *Client* commands are what the client sends")
			.append(" (MONITOR, script-internal commands excluded); *all* commands add those a Lua script runs")
			.append(" (INFO commandstats deltas, the INFO calls themselves subtracted). The retried count-down rows")
			.append(" show the semantics: distlock's second call with the same participant changes nothing")
			.append(" (count stays 1); Redisson's second `countDown()` counts again and opens the latch early.\n\n")
			.append("| operation | library | client commands / op | all commands / op | client commands | all commands |\n")
			.append("| --- | --- | --- | --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	@FunctionalInterface
	private interface Op {

		void run(int i) throws Exception;

	}

	private String row(String operation, String library, Lib.Raw raw, Op op) throws Exception {
		for (int i = 0; i < 50; i++) {
			op.run(-1 - i);
		}
		Map<String, Long> before = commandStats(raw);
		Map<String, Long> client;
		try (CommandMonitor monitor = new CommandMonitor(this.port)) {
			for (int i = 0; i < CYCLES; i++) {
				op.run(i);
			}
			client = settled(monitor);
		}
		Map<String, Long> after = commandStats(raw);
		Map<String, Long> all = new TreeMap<>();
		after.forEach((command, calls) -> {
			long delta = calls - before.getOrDefault(command, 0L);
			if (command.equals("info")) {
				delta -= 1;
			}
			if (command.equals("monitor")) {
				delta = 0;
			}
			if (delta > 0) {
				all.put(command, delta);
			}
		});
		return String.format(Locale.ROOT, "| %s | %s | %.2f | %.2f | %s | %s |%n", operation, library,
				sum(client) / (double) CYCLES, sum(all) / (double) CYCLES, perOp(client), perOp(all));
	}

	private static String perOp(Map<String, Long> counts) {
		StringBuilder text = new StringBuilder();
		counts.forEach((command, calls) -> text.append((text.length() > 0) ? ", " : "")
			.append(command)
			.append(' ')
			.append(String.format(Locale.ROOT, "%.2f", calls / (double) CYCLES)));
		return text.toString();
	}

	private static long sum(Map<String, Long> counts) {
		return counts.values().stream().mapToLong(Long::longValue).sum();
	}

	private static Map<String, Long> commandStats(Lib.Raw raw) {
		Map<String, Long> calls = new TreeMap<>();
		for (String line : raw.info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_")) {
				String command = line.substring("cmdstat_".length(), line.indexOf(':'));
				for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
					if (field.startsWith("calls=")) {
						calls.put(command, Long.parseLong(field.substring("calls=".length())));
					}
				}
			}
		}
		return calls;
	}

	private static Map<String, Long> settled(CommandMonitor monitor) throws InterruptedException {
		long last = -1;
		while (monitor.total() != last) {
			last = monitor.total();
			Thread.sleep(300);
		}
		return monitor.snapshot();
	}

	/** Accepted orders per second from 2 JVMs x 16 threads, one lock vs segments. */
	private void segmentedStock() throws Exception {
		StringBuilder rows = new StringBuilder();
		for (int round = 1; round <= ROUNDS; round++) {
			for (int segments : new int[] { 1, 16 }) {
				rows.append(stockRound(round, segments));
			}
		}
		this.report.append("## Hot inventory: one lock against 16 segments\n\n")
			.append("One SKU with ")
			.append(STOCK)
			.append(" units in Redis; 2 JVMs x ")
			.append(THREADS)
			.append(" threads order one unit at a time until it is sold out. Each order reads the stock under")
			.append(" the lock, works ")
			.append(SegmentedStockWorker.WORK.toMillis())
			.append(" ms (a payment), then writes. *1 segment* is one distlock lock on the SKU (`execute`);")
			.append(" *16 segments* is `SegmentedLock.take` over 16 segment locks. Orders/s = units sold / time")
			.append(" from the start until the last buyer of either JVM stopped. Oversold = units sold beyond the")
			.append(" stock, or a segment below zero.\n\n")
			.append("| round | segments | orders/s | sold here + there | left | oversold |\n")
			.append("| --- | --- | --- | --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	private String stockRound(int round, int segments) throws Exception {
		String sku = "bench-stock-" + round + "-" + segments;
		try (SegmentedStockWorker here = new SegmentedStockWorker(this.port)) {
			here.template.run("warm-up", () -> {
			});
			here.restock(sku, STOCK, segments);
			Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
					"-Xmx512m", "-cp", System.getProperty("java.class.path"), SegmentedStockWorker.class.getName(),
					Integer.toString(this.port), sku, Integer.toString(segments), Integer.toString(THREADS))
				.redirectError(ProcessBuilder.Redirect.INHERIT)
				.start();
			try {
				BufferedReader fromChild = new BufferedReader(
						new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
				awaitLine(fromChild, "READY");
				long start = System.nanoTime() + 300_000_000L;
				Writer toChild = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
				toChild.write(start + "\n");
				toChild.flush();
				long[] mine = here.run(sku, segments, THREADS, start);
				String[] theirs = awaitLine(fromChild, "RESULT").split(" ");
				if (!child.waitFor(120, TimeUnit.SECONDS)) {
					throw new IllegalStateException("The second JVM did not end");
				}
				long sold = mine[0] + Long.parseLong(theirs[1]);
				long end = Math.max(mine[1], Long.parseLong(theirs[2]));
				long left = 0;
				boolean negative = false;
				for (int i = 0; i < segments; i++) {
					long units = Long.parseLong((String) here.redis.opsForHash().get(sku, "s" + i));
					left += units;
					negative |= units < 0;
				}
				long oversold = Math.max(0, sold - STOCK) + (negative ? 1 : 0);
				return String.format(Locale.ROOT, "| %d | %d | %.0f | %d + %s | %d | %d |%n", round, segments,
						sold / ((end - start) / 1e9), mine[0], theirs[1], left, oversold);
			}
			finally {
				child.destroyForcibly();
			}
		}
	}

	private static String awaitLine(BufferedReader in, String prefix) throws IOException {
		String line;
		while ((line = in.readLine()) != null) {
			if (line.startsWith(prefix)) {
				return line;
			}
		}
		throw new IllegalStateException("The second JVM exited before saying " + prefix);
	}

}
