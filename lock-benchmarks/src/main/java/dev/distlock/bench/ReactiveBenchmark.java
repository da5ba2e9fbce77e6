package dev.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.distlock.LockOptions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.reactive.DefaultReactiveLockTemplate;
import dev.distlock.reactive.ReactiveLockTemplate;
import org.redisson.Redisson;
import org.redisson.api.RLockReactive;
import org.redisson.api.RedissonClient;
import org.redisson.api.RedissonReactiveClient;
import org.redisson.config.Config;
import reactor.core.publisher.Mono;

/**
 * distlock's reactive lock side by side with Redisson's {@code RLockReactive} and with
 * distlock's own blocking template, on one {@code redis-server} in one run: a fixed
 * number of callers each acquiring and releasing in a closed loop, on a key of its own
 * (uncontended) and all on one key (hot). Reactive callers are chains of subscriptions,
 * blocking callers are platform threads. Redisson's reactive lock is called with an owner
 * id per acquisition, as its documentation asks of code that has no stable thread. Writes
 * {@code RESULTS-reactive.md}.
 */
public final class ReactiveBenchmark {

	private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.window-ms", 3000));

	private static final int CALLERS = Integer.getInteger("bench.reactive.callers", 16);

	private static final LockOptions OPTIONS = Lib.Distlock.options(Duration.ofSeconds(30), false);

	/** The libraries measured; the ratios need all three. */
	private static final List<String> LIBS = List
		.of(System.getProperty("bench.reactive.libs", "distlock-blocking,distlock-reactive,redisson-reactive")
			.split(","));

	private ReactiveBenchmark() {
	}

	/** One library's acquire-and-release cycle on a key, as a publisher. */
	private interface Cycles extends AutoCloseable {

		Mono<Void> cycle(String key);

		/** True if the library's cycle blocks the calling thread (run on threads). */
		boolean blocking();

		@Override
		void close();

	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS-reactive.md");
		StringBuilder report = new StringBuilder("# distlock's reactive lock beside Redisson's\n\n");
		try (RedisServer redis = RedisServer.start()) {
			report.append("Written by `ReactiveBenchmark` (`./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark`) on ")
				.append(LocalDate.now())
				.append(": ")
				.append(Runtime.getRuntime().availableProcessors())
				.append(" cores, JDK ")
				.append(System.getProperty("java.version"))
				.append(", one redis-server on loopback; median (min–max) of ")
				.append(ROUNDS)
				.append(" rounds of ")
				.append(WINDOW.toMillis())
				.append(" ms windows. ")
				.append(CALLERS)
				.append(" callers, each acquiring and releasing in a closed loop: reactive callers are chains of")
				.append(" subscriptions on the clients' own threads, `distlock-blocking` callers are platform threads")
				.append(" on the blocking template. Uncontended: a key per caller; hot: one key for all. Both")
				.append(" libraries renew a 30 s lease (Redisson's watchdog); Redisson's lock is given a random owner")
				.append(" id per acquisition. p99: of one acquire-and-release cycle, in ms.\n\n");
			Map<String, double[][]> results = new LinkedHashMap<>();
			for (String lib : LIBS) {
				results.put(lib, new double[4][ROUNDS]);
			}
			for (int round = 0; round < ROUNDS; round++) {
				for (String lib : LIBS) {
					try (Cycles cycles = open(lib, redis.port())) {
						warm(cycles);
						double[] uncontended = run(cycles, (caller) -> "r-" + caller);
						double[] hot = run(cycles, (caller) -> "r-hot");
						double[][] row = results.get(lib);
						row[0][round] = uncontended[0];
						row[1][round] = uncontended[1];
						row[2][round] = hot[0];
						row[3][round] = hot[1];
					}
				}
			}
			report.append(
					"| library | uncontended cycles/s | uncontended p99 ms | hot-key cycles/s | hot-key p99 ms |\n");
			report.append("| --- | --- | --- | --- | --- |\n");
			for (Map.Entry<String, double[][]> entry : results.entrySet()) {
				report.append("| ").append(entry.getKey());
				for (double[] values : entry.getValue()) {
					report.append(" | ").append(cell(values));
				}
				report.append(" |\n");
			}
			double[][] reactive = results.get("distlock-reactive");
			double[][] redisson = results.get("redisson-reactive");
			double[][] blocking = results.get("distlock-blocking");
			if (reactive == null || redisson == null || blocking == null) {
				Files.writeString(output, report);
				System.out.print(report);
				System.exit(0);
			}
			report.append("\nRatios of medians: distlock-reactive / redisson-reactive: uncontended ")
				.append(ratio(reactive[0], redisson[0]))
				.append("x, hot key ")
				.append(ratio(reactive[2], redisson[2]))
				.append("x (p99 ")
				.append(ratio(redisson[1], reactive[1]))
				.append("x and ")
				.append(ratio(redisson[3], reactive[3]))
				.append("x lower); distlock-reactive / distlock-blocking uncontended: ")
				.append(ratio(reactive[0], blocking[0]))
				.append("x.\n");
		}
		Files.writeString(output, report);
		System.out.print(report);
		System.exit(0);
	}

	private static Cycles open(String lib, int port) {
		return switch (lib) {
			case "distlock-blocking" -> {
				Lib.Distlock distlock = new Lib.Distlock(port, Duration.ofSeconds(30));
				yield new Cycles() {
					@Override
					public Mono<Void> cycle(String key) {
						return Mono.fromRunnable(() -> distlock.template.acquire(key, OPTIONS).release());
					}

					@Override
					public boolean blocking() {
						return true;
					}

					@Override
					public void close() {
						distlock.close();
					}
				};
			}
			case "distlock-reactive" -> {
				Lib.Distlock distlock = new Lib.Distlock(port, Duration.ofSeconds(30));
				ReactiveLockTemplate template = new DefaultReactiveLockTemplate(distlock.template);
				yield new Cycles() {
					@Override
					public Mono<Void> cycle(String key) {
						return template.acquire(key, OPTIONS).flatMap(template::release);
					}

					@Override
					public boolean blocking() {
						return false;
					}

					@Override
					public void close() {
						distlock.close();
					}
				};
			}
			case "redisson-reactive" -> {
				Config config = new Config();
				config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
				RedissonClient client = Redisson.create(config);
				RedissonReactiveClient reactive = client.reactive();
				yield new Cycles() {
					@Override
					public Mono<Void> cycle(String key) {
						RLockReactive lock = reactive.getLock(key);
						long owner = ThreadLocalRandom.current().nextLong();
						return lock.lock(owner).then(Mono.defer(() -> lock.unlock(owner)));
					}

					@Override
					public boolean blocking() {
						return false;
					}

					@Override
					public void close() {
						client.shutdown();
					}
				};
			}
			default -> throw new IllegalArgumentException(lib);
		};
	}

	private static void warm(Cycles cycles) throws InterruptedException {
		// The first call connects; a loaded machine may take longer than the store
		// timeout.
		long connectBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (true) {
			try {
				block(cycles.cycle("warm-0"));
				break;
			}
			catch (RuntimeException ex) {
				if (System.nanoTime() > connectBy) {
					throw ex;
				}
			}
		}
		for (int i = 0; i < 200; i++) {
			block(cycles.cycle("warm-" + (i % 4)));
		}
	}

	/** Cycles per second and the p99 of one cycle in ms, {@link #CALLERS} callers. */
	private static double[] run(Cycles cycles, Function<Integer, String> keyOf) throws InterruptedException {
		long end = System.nanoTime() + WINDOW.toNanos();
		List<long[]> latencies = new ArrayList<>();
		int[] counts = new int[CALLERS];
		CountDownLatch done = new CountDownLatch(CALLERS);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long start = System.nanoTime();
		for (int caller = 0; caller < CALLERS; caller++) {
			long[] own = new long[1 << 20];
			latencies.add(own);
			int index = caller;
			String key = keyOf.apply(caller);
			if (cycles.blocking()) {
				Thread thread = new Thread(() -> {
					try {
						while (System.nanoTime() < end) {
							long began = System.nanoTime();
							cycles.cycle(key).block();
							record(own, counts, index, System.nanoTime() - began);
						}
					}
					catch (Throwable ex) {
						failure.compareAndSet(null, ex);
					}
					finally {
						done.countDown();
					}
				});
				thread.start();
			}
			else {
				loop(cycles, key, end, own, counts, index, done, failure);
			}
		}
		if (!done.await(WINDOW.toMillis() + 60_000, TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException("callers did not finish");
		}
		long elapsed = System.nanoTime() - start;
		if (failure.get() != null) {
			throw new IllegalStateException("a cycle failed", failure.get());
		}
		int total = Arrays.stream(counts).sum();
		long[] all = new long[total];
		int at = 0;
		for (int caller = 0; caller < CALLERS; caller++) {
			int n = Math.min(counts[caller], latencies.get(caller).length);
			System.arraycopy(latencies.get(caller), 0, all, at, n);
			at += n;
		}
		Arrays.sort(all, 0, at);
		double p99 = (at == 0) ? 0 : all[Math.min(at - 1, (int) (at * 0.99))] / 1e6;
		return new double[] { total / (elapsed / 1e9), p99 };
	}

	/** One reactive caller: the next cycle subscribed when the last completes. */
	private static void loop(Cycles cycles, String key, long end, long[] own, int[] counts, int index,
			CountDownLatch done, AtomicReference<Throwable> failure) {
		if (System.nanoTime() >= end) {
			done.countDown();
			return;
		}
		long began = System.nanoTime();
		cycles.cycle(key).subscribe(null, (ex) -> {
			failure.compareAndSet(null, ex);
			done.countDown();
		}, () -> {
			record(own, counts, index, System.nanoTime() - began);
			loop(cycles, key, end, own, counts, index, done, failure);
		});
	}

	private static void record(long[] own, int[] counts, int index, long nanos) {
		int n = counts[index];
		if (n < own.length) {
			own[n] = nanos;
		}
		counts[index] = n + 1;
	}

	private static void block(Mono<Void> cycle) {
		cycle.block(Duration.ofSeconds(30));
	}

	private static String cell(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		double median = sorted[sorted.length / 2];
		return format(median) + " (" + format(sorted[0]) + "–" + format(sorted[sorted.length - 1]) + ")";
	}

	private static String format(double value) {
		return (value >= 100) ? String.valueOf(Math.round(value)) : String.format("%.2f", value);
	}

	private static String ratio(double[] a, double[] b) {
		double[] x = a.clone();
		double[] y = b.clone();
		Arrays.sort(x);
		Arrays.sort(y);
		return String.format("%.2f", x[x.length / 2] / y[y.length / 2]);
	}

}
