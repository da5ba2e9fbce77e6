package dev.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import dev.distlock.LockTemplate;
import dev.distlock.harness.redis.RedisServer;
import org.jspecify.annotations.Nullable;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * Runs distlock side by side with its peers on one {@code redis-server} it starts itself,
 * scenario by scenario, each library in turn within a round, three rounds; writes the
 * figures (min / median / max of the rounds, and ratios) as Markdown.
 */
public final class Benchmark {

	private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.window-ms", 3000));

	/**
	 * The scenarios to run ({@code -Dbench.scenarios=S3,S4}), or {@code all}; for a quick
	 * look at a few.
	 */
	private static final String SCENARIOS = System.getProperty("bench.scenarios", "all");

	/**
	 * The libraries to run in S1 to S4 ({@code -Dbench.libs=raw-lettuce,distlock}), or
	 * {@code all}; for a quick look at a few.
	 */
	private static final List<String> LIBS = "all".equals(System.getProperty("bench.libs", "all")) ? Lib.NAMES
			: Lib.NAMES.stream().filter(List.of(System.getProperty("bench.libs").split(","))::contains).toList();

	private final int port;

	private final StringBuilder report = new StringBuilder();

	private final Map<String, String> notes = new LinkedHashMap<>();

	private final Targets targets = new Targets();

	/**
	 * Where the notes kept across runs begin and end in the results file: analyses
	 * written by hand (the causes of a missed target, JMH figures), which a new run
	 * carries over as they are.
	 */
	static final String NOTES_BEGIN = "<!-- notes kept across runs: begin -->";

	static final String NOTES_END = "<!-- notes kept across runs: end -->";

	private Benchmark(int port) {
		this.port = port;
	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS.md");
		try (RedisServer redis = RedisServer.start()) {
			Benchmark benchmark = new Benchmark(redis.port());
			benchmark.header(redis);
			benchmark.run(keptNotes(output));
			Files.writeString(output, benchmark.report + JdbcBenchmark.keptSection(output));
			System.out.println(benchmark.report);
			System.out.println("Written to " + output.toAbsolutePath());
		}
		System.exit(0);
	}

	/** The notes kept across runs in {@code output}, markers included, or empty. */
	static String keptNotes(Path output) throws IOException {
		String notes = markedSection(output, NOTES_BEGIN, NOTES_END);
		return notes.isEmpty() ? "" : notes + "\n";
	}

	/**
	 * The part of an existing results file from {@code beginMarker} to the end of
	 * {@code endMarker}, or empty when the file or either marker is missing: what a new
	 * run carries over as it is.
	 */
	static String markedSection(Path output, String beginMarker, String endMarker) throws IOException {
		if (!Files.exists(output)) {
			return "";
		}
		String existing = Files.readString(output);
		int begin = existing.indexOf(beginMarker);
		int end = existing.indexOf(endMarker);
		return (begin < 0 || end < begin) ? "" : existing.substring(begin, end + endMarker.length());
	}

	private void header(RedisServer redis) {
		String version = redis.version();
		this.report.append("# distlock benchmark results\n\n")
			.append("Run on ")
			.append(LocalDate.now())
			.append(": ")
			.append(Runtime.getRuntime().availableProcessors())
			.append(" cores, JDK ")
			.append(System.getProperty("java.version"))
			.append(", redis-server ")
			.append(version)
			.append(" on loopback, started by the harness. Every library talks to the same server. Figures are")
			.append(" min / median / max over ")
			.append(ROUNDS)
			.append(" rounds of ")
			.append(WINDOW.toMillis())
			.append(" ms windows; within a round the libraries run one after the other. Command:")
			.append(" `./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark`.\n\n");
	}

	private void run(String keptNotes) throws Exception {
		double ping = pingMillis();
		this.report.append(String.format(Locale.ROOT, "PING round trip from one thread, p50: %.3f ms%n%n", ping));
		if ("server-cost".equals(System.getProperty("bench.only"))) {
			new ServerCost(this.port, WINDOW, this.report, this.targets).run();
			this.report.append(this.targets.table()).append("## Notes\n\n").append(keptNotes);
			return;
		}
		if (runs("S1")) {
			throughput("S1 uncontended, 1 thread, one fixed key, lock+unlock cycles/s", 1);
		}
		if (runs("S2")) {
			throughput("S2 uncontended, 16 threads, a fixed key per thread, cycles/s", 16);
		}
		if (runs("S3")) {
			hotKey("S3 one hot key, 8 threads in one JVM", 8, false, ping);
		}
		if (runs("S4")) {
			hotKey("S4 one hot key, 2 JVMs x 4 threads", 4, true, ping);
		}
		if (runs("S5")) {
			commands();
		}
		if (runs("S5")) {
			new ServerCost(this.port, WINDOW, this.report, this.targets).run();
		}
		if (runs("S6")) {
			renewal();
		}
		if (runs("S7")) {
			annotation();
		}
		this.report.append(this.targets.table());
		this.report.append("## Notes\n\n");
		this.notes
			.forEach((name, note) -> this.report.append("- ").append(name).append(": ").append(note).append('\n'));
		this.report.append(this.notes.isEmpty() ? "" : "\n").append(keptNotes);
	}

	private static boolean runs(String scenario) {
		return "all".equals(SCENARIOS) || java.util.Arrays.asList(SCENARIOS.split(",")).contains(scenario);
	}

	private double pingMillis() {
		try (Lib.Raw raw = new Lib.Raw(this.port)) {
			long[] samples = new long[20_000];
			for (int i = 0; i < samples.length; i++) {
				samples[i] = raw.ping();
			}
			Arrays.sort(samples);
			return samples[samples.length / 2] / 1e6;
		}
	}

	/** Cycles per second with {@code threads} threads on keys of their own. */
	private void throughput(String title, int threads) throws Exception {
		Map<String, double[]> results = new LinkedHashMap<>();
		for (int round = 0; round < ROUNDS; round++) {
			for (String name : LIBS) {
				try (Lib lib = Lib.create(name, this.port)) {
					cycles(lib, threads, Duration.ofMillis(500));
					double rate = cycles(lib, threads, WINDOW) / (WINDOW.toNanos() / 1e9);
					results.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = rate;
				}
			}
		}
		table(title, "cycles/s", results, true);
		if (threads == 16) {
			this.targets.distinctKeys(results);
		}
	}

	static long cycles(Lib lib, int threads, Duration window) throws InterruptedException {
		LongAdder count = new LongAdder();
		long end = System.nanoTime() + window.toNanos();
		List<Thread> workers = new ArrayList<>();
		List<Exception> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
		for (int t = 0; t < threads; t++) {
			String key = "k-" + lib.name() + "-" + t;
			Thread worker = new Thread(() -> {
				try {
					while (System.nanoTime() - end < 0) {
						lib.lock(key).unlock();
						count.increment();
					}
				}
				catch (Exception ex) {
					failures.add(ex);
				}
			});
			workers.add(worker);
			worker.start();
		}
		for (Thread worker : workers) {
			worker.join();
		}
		if (!failures.isEmpty()) {
			throw new IllegalStateException(lib.name() + " failed", failures.get(0));
		}
		return count.sum();
	}

	private void hotKey(String title, int threads, boolean twoJvms, double ping) throws Exception {
		Map<String, double[]> rates = new LinkedHashMap<>();
		Map<String, double[]> crossRates = new LinkedHashMap<>();
		Map<String, double[]> p50 = new LinkedHashMap<>();
		Map<String, double[]> p99 = new LinkedHashMap<>();
		Map<String, double[]> shares = new LinkedHashMap<>();
		for (int round = 0; round < ROUNDS; round++) {
			for (String name : LIBS) {
				Events.Summary summary = twoJvms ? twoJvms(name, threads) : oneJvm(name, threads);
				double seconds = WINDOW.toNanos() / 1e9;
				rates.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.acquisitions() / seconds;
				crossRates.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.crossJvmHandoffs()
						/ seconds;
				p50.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.p50Millis();
				p99.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.p99Millis();
				shares.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = 100 * summary.smallerJvmShare();
			}
		}
		table(title + ": acquisitions/s", "acquisitions/s", rates, true);
		if (twoJvms) {
			this.targets.twoJvmHotKey(rates, shares);
		}
		else {
			this.targets.oneJvmHotKey(rates);
		}
		if (twoJvms) {
			table(title + ": hand-offs between the JVMs per second", "cross-JVM hand-offs/s", crossRates, true);
			table(title + ": the smaller JVM's share of the acquisitions, %", "%", shares, false);
		}
		table(title + ": hand-off latency p50 (release call to the next holder's acquire), ms", "ms", p50, false);
		this.report.append(String.format(Locale.ROOT, "Hand-off p50 in PING round trips (PING p50 %.3f ms):", ping));
		p50.forEach((name, values) -> this.report
			.append(String.format(Locale.ROOT, " %s %.1f;", name, median(values) / ping)));
		this.report.append("\n\n");
		table(title + ": hand-off latency p99, ms", "ms", p99, false);
	}

	private Events.Summary oneJvm(String name, int threads) throws Exception {
		try (Lib lib = Lib.create(name, this.port)) {
			lib.lock("warm-up").unlock();
			return HotKeyWorker.run(lib, "hot", threads, 0, System.nanoTime() + 50_000_000L, WINDOW).summarize();
		}
	}

	private Events.Summary twoJvms(String name, int threads) throws Exception {
		try (Lib lib = Lib.create(name, this.port)) {
			lib.lock("warm-up").unlock();
			return HotKeyWorker.twoJvms(lib, Integer.toString(this.port), threads, WINDOW);
		}
	}

	/** S5: exact client commands per uncontended cycle and per contended hand-off. */
	private void commands() throws Exception {
		StringBuilder rows = new StringBuilder();
		for (String name : Lib.NAMES) {
			try (Lib lib = Lib.create(name, this.port); Lib other = Lib.create(name, this.port)) {
				lib.lock("s5-warm").unlock();
				other.lock("s5-warm").unlock();
				int cycles = 1000;
				double perCycle;
				Map<String, Long> uncontended;
				try (CommandMonitor monitor = new CommandMonitor(this.port)) {
					for (int i = 0; i < cycles; i++) {
						lib.lock("s5-uncontended").unlock();
					}
					uncontended = settled(monitor);
					perCycle = sum(uncontended) / (double) cycles;
				}
				double perHandoff;
				Map<String, Long> contended;
				Events.Summary summary;
				try (CommandMonitor monitor = new CommandMonitor(this.port)) {
					long start = System.nanoTime() + 20_000_000L;
					Events events = new Events();
					Thread second = new Thread(() -> {
						try {
							events.addAll(
									eventsOf(HotKeyWorker.run(other, "s5-hot", 1, 1000, start, Duration.ofSeconds(2))));
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
					});
					second.start();
					events.addAll(eventsOf(HotKeyWorker.run(lib, "s5-hot", 1, 0, start, Duration.ofSeconds(2))));
					second.join();
					contended = settled(monitor);
					summary = events.summarize();
					perHandoff = sum(contended) / (double) Math.max(1, summary.handoffs());
				}
				rows.append(String.format(Locale.ROOT, "| %s | %.2f | %s | %.2f | %d | %s |%n", name, perCycle,
						uncontended, perHandoff, summary.handoffs(), contended));
			}
		}
		this.report.append("## S5 Redis commands sent by clients (MONITOR, script-internal commands excluded)\n\n")
			.append("Uncontended: 1,000 lock+unlock cycles on one key by one thread. Contended: two clients")
			.append(" (two JVMs' worth) with one thread each taking one key in turn for 2 s; all their commands")
			.append(" divided by the hand-offs between them.\n\n")
			.append("| library | per uncontended cycle | commands | per contended hand-off | hand-offs | commands |\n")
			.append("| --- | --- | --- | --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	private static List<long[]> eventsOf(Events events) {
		return events.list();
	}

	/** Waits until MONITOR has delivered everything (no new line for 300 ms). */
	private static Map<String, Long> settled(CommandMonitor monitor) {
		long last = -1;
		while (monitor.total() != last) {
			last = monitor.total();
			LockSupport.parkNanos(300_000_000L);
		}
		return monitor.snapshot();
	}

	private static long sum(Map<String, Long> counts) {
		return counts.values().stream().mapToLong(Long::longValue).sum();
	}

	/** S6: round trips per renewal tick with 10,000 held locks. */
	private void renewal() throws Exception {
		int locks = 10_000;
		StringBuilder rows = new StringBuilder();
		Duration lease = Duration.ofSeconds(3);
		rows.append(renewalRow("distlock", locks, lease, () -> new Lib.Distlock(this.port, lease)));
		rows.append(renewalRow("redisson", locks, lease, () -> new Lib.RedissonLib(this.port, lease.toMillis())));
		this.report.append("## S6 renewal round trips per tick, 10,000 held locks\n\n")
			.append("Lease (Redisson: lock watchdog timeout) 3 s, so one renewal tick per second; client commands")
			.append(" counted with MONITOR over 6 s. Spring Integration and lock4j renew only when the")
			.append(" application schedules it per lock, so they are not in this table.\n\n")
			.append("| library | client commands per tick | commands over 6 s |\n| --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	private String renewalRow(String name, int locks, Duration lease, java.util.function.Supplier<Lib> factory)
			throws Exception {
		try (Lib lib = factory.get()) {
			List<Lib.Unlock> held = new ArrayList<>(locks);
			for (int i = 0; i < locks; i++) {
				held.add(lib.lock("s6-" + i));
			}
			Map<String, Long> counts;
			try (CommandMonitor monitor = new CommandMonitor(this.port)) {
				LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(6));
				counts = monitor.snapshot();
			}
			for (Lib.Unlock unlock : held) {
				unlock.unlock();
			}
			double perTick = sum(counts) / (6.0 / (lease.toMillis() / 3000.0));
			return String.format(Locale.ROOT, "| %s | %.1f | %s |%n", name, perTick, counts);
		}
	}

	/** S7: the annotation against LockTemplate, same work, same keys. */
	private void annotation() throws Exception {
		Map<String, double[]> results = new LinkedHashMap<>();
		try (ConfigurableApplicationContext context = AnnotatedApp.start(this.port)) {
			AnnotatedApp.Work work = context.getBean(AnnotatedApp.Work.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			for (int threads : new int[] { 1, 16 }) {
				for (int round = 0; round < ROUNDS; round++) {
					results.computeIfAbsent("LockTemplate, " + threads + " thread(s)",
							(n) -> new double[ROUNDS])[round] = rate(threads, (key) -> template.run(key, () -> {
							}));
					results.computeIfAbsent("@DistributedLock, " + threads + " thread(s)",
							(n) -> new double[ROUNDS])[round] = rate(threads, work::run);
				}
			}
		}
		table("S7 annotation overhead: @DistributedLock against LockTemplate, uncontended", "cycles/s", results, false);
		this.report.append("Annotation overhead (1 - annotation / template, medians):");
		for (int threads : new int[] { 1, 16 }) {
			double template = median(results.get("LockTemplate, " + threads + " thread(s)"));
			double annotated = median(results.get("@DistributedLock, " + threads + " thread(s)"));
			this.report
				.append(String.format(Locale.ROOT, " %d thread(s) %.1f%%;", threads, 100 * (1 - annotated / template)));
		}
		this.report.append("\n\n");
	}

	private static double rate(int threads, Consumer<String> call) throws InterruptedException {
		LongAdder count = new LongAdder();
		long warm = System.nanoTime() + 300_000_000L;
		long end = warm + WINDOW.toNanos();
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			String key = "s7-" + t;
			Thread worker = new Thread(() -> {
				while (System.nanoTime() - end < 0) {
					call.accept(key);
					if (System.nanoTime() - warm > 0) {
						count.increment();
					}
				}
			});
			workers.add(worker);
			worker.start();
		}
		for (Thread worker : workers) {
			worker.join();
		}
		return count.sum() / (WINDOW.toNanos() / 1e9);
	}

	private void table(String title, String unit, Map<String, double[]> results, boolean ratios) {
		table(this.report, title, unit, results, ratios ? "raw-lettuce" : null, ratios ? "distlock" : null);
	}

	/**
	 * Appends a min / median / max table; with a {@code baseline}, the ratio of each
	 * median to the baseline's; with a {@code reference}, the reference's median to each.
	 */
	static void table(StringBuilder report, String title, String unit, Map<String, double[]> results,
			@Nullable String baseline, @Nullable String reference) {
		report.append("## ").append(title).append("\n\n").append("| library | min | median | max |");
		StringBuilder rule = new StringBuilder("| --- | --- | --- | --- |");
		if (baseline != null) {
			report.append(" median / ").append(baseline).append(" |");
			rule.append(" --- |");
		}
		if (reference != null) {
			report.append(' ').append(reference).append(" / this |");
			rule.append(" --- |");
		}
		report.append('\n').append(rule).append('\n');
		double base = (baseline != null && results.containsKey(baseline)) ? median(results.get(baseline)) : Double.NaN;
		double ref = (reference != null && results.containsKey(reference)) ? median(results.get(reference))
				: Double.NaN;
		results.forEach((name, values) -> {
			double[] sorted = values.clone();
			Arrays.sort(sorted);
			report.append(String.format(Locale.ROOT, "| %s | %s | %s | %s |", name, format(sorted[0]),
					format(median(values)), format(sorted[sorted.length - 1])));
			if (baseline != null) {
				report.append(String.format(Locale.ROOT, " %.2f |", median(values) / base));
			}
			if (reference != null) {
				report.append(String.format(Locale.ROOT, " %.2f |", ref / median(values)));
			}
			report.append('\n');
		});
		report.append("\n(").append(unit).append(")\n\n");
	}

	static String format(double value) {
		return (value >= 100) ? String.format(Locale.ROOT, "%,.0f", value) : String.format(Locale.ROOT, "%.3f", value);
	}

	static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

}
