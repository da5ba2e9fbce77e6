package dev.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;

/**
 * distlock's JDBC store side by side with ShedLock's {@code JdbcTemplateLockProvider} and
 * Spring Integration's {@code JdbcLockRegistry}, on one PostgreSQL and then one MariaDB
 * server it starts itself: uncontended cycles on 1 and 16 threads, one hot key across two
 * JVMs, statements per uncontended cycle from the server's own statistics. Writes its
 * section of {@code RESULTS.md} between two markers, leaving the Redis part alone.
 */
public final class JdbcBenchmark {

	static final String BEGIN = "<!-- JDBC results: begin -->";

	static final String END = "<!-- JDBC results: end -->";

	private static final int ROUNDS = Integer.getInteger("bench.jdbc.rounds", 3);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.jdbc.window-ms", 2000));

	private static final int CYCLES = 1000;

	/** Statements a driver runs when a pool opens a connection, not the library's. */
	private static final List<String> CONNECTION_SETUP = List.of("set application_name", "set `sql_mode`",
			"select @@session");

	private final StringBuilder report = new StringBuilder();

	private final DatabaseServer server;

	private JdbcBenchmark(DatabaseServer server) {
		this.server = server;
	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS.md");
		long began = System.nanoTime();
		StringBuilder section = new StringBuilder(BEGIN).append("\n\n# JDBC stores\n\n")
			.append("Run on ")
			.append(LocalDate.now())
			.append(": ")
			.append(Runtime.getRuntime().availableProcessors())
			.append(" cores, JDK ")
			.append(System.getProperty("java.version"))
			.append(". Each database is a real server on loopback started by the harness (lock-test-harness-jdbc);")
			.append(" every library has a HikariCP pool of its own with default settings (10 connections). Figures")
			.append(" are min / median / max over ")
			.append(ROUNDS)
			.append(" rounds of ")
			.append(WINDOW.toMillis())
			.append(" ms windows. Command: `./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark")
			.append(" -Dbench.redis.skip=true`. ShedLock never waits (a busy lock is skipped), so its \"wait\"")
			.append(" here is a retry every millisecond until acquired; Spring Integration polls every 100 ms")
			.append(" (its default); distlock is woken by NOTIFY on PostgreSQL and polls with jittered")
			.append(" backoff on MariaDB. `distlock-jdbc-handover` is distlock as configured by default, with")
			.append(" local hand-over on (a lock passes between threads of one JVM in memory, at most 32 times")
			.append(" or 20 ms per acquisition); `distlock-jdbc` has it off, the store alone.\n\n");
		for (String database : System.getProperty("bench.jdbc.databases", "postgresql,mariadb").split(",")) {
			Supplier<DatabaseServer> start = switch (database.trim()) {
				case "postgresql" -> PostgresServer::start;
				case "mariadb" -> MariaDbServer::start;
				default -> throw new IllegalArgumentException("Unknown database " + database);
			};
			try (DatabaseServer server = start.get()) {
				JdbcBenchmark benchmark = new JdbcBenchmark(server);
				benchmark.run();
				section.append(benchmark.report);
			}
		}
		section.append(END).append('\n');
		String existing = Files.exists(output) ? Files.readString(output) : "";
		String kept = existing.contains(BEGIN) ? existing.substring(0, existing.indexOf(BEGIN)) : existing;
		if (!kept.isEmpty() && !kept.endsWith("\n\n")) {
			kept += kept.endsWith("\n") ? "\n" : "\n\n";
		}
		Files.writeString(output, kept + section);
		System.out.println(section);
		System.out.println("Written to " + output.toAbsolutePath() + " in "
				+ TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - began) + " s");
		System.exit(0);
	}

	/** The JDBC section of an existing results file, for the Redis run to keep. */
	static String keptSection(Path output) throws IOException {
		String section = Benchmark.markedSection(output, BEGIN, END);
		return section.isEmpty() ? "" : "\n" + section + "\n";
	}

	private void run() throws Exception {
		String label = this.server.kind().equals("postgresql") ? "PostgreSQL" : "MariaDB";
		this.report.append("## ").append(label).append(' ').append(this.server.version()).append("\n\n");
		throughput("J1 " + label + ", uncontended, 1 thread, one fixed key, lock+unlock cycles/s", 1);
		throughput("J2 " + label + ", uncontended, 16 threads, a fixed key per thread, cycles/s", 16);
		hotKey("J3 " + label + ", one hot key, 2 JVMs x 4 threads", 4);
		statements(label);
	}

	private void throughput(String title, int threads) throws Exception {
		Map<String, double[]> results = new LinkedHashMap<>();
		for (int round = 0; round < ROUNDS; round++) {
			for (String name : JdbcLib.NAMES) {
				try (Lib lib = JdbcLib.create(name, this.server.jdbcUrl())) {
					Benchmark.cycles(lib, threads, Duration.ofMillis(500));
					double rate = Benchmark.cycles(lib, threads, WINDOW) / (WINDOW.toNanos() / 1e9);
					results.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = rate;
				}
			}
		}
		Benchmark.table(this.report, title, "cycles/s", results, null, "distlock-jdbc");
	}

	private void hotKey(String title, int threads) throws Exception {
		Map<String, double[]> rates = new LinkedHashMap<>();
		Map<String, double[]> crossRates = new LinkedHashMap<>();
		Map<String, double[]> p50 = new LinkedHashMap<>();
		double seconds = WINDOW.toNanos() / 1e9;
		for (int round = 0; round < ROUNDS; round++) {
			for (String name : JdbcLib.NAMES) {
				Events.Summary summary = twoJvms(name, threads);
				rates.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.acquisitions() / seconds;
				crossRates.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.crossJvmHandoffs()
						/ seconds;
				p50.computeIfAbsent(name, (n) -> new double[ROUNDS])[round] = summary.p50Millis();
			}
		}
		Benchmark.table(this.report, title + ": acquisitions/s", "acquisitions/s", rates, null, "distlock-jdbc");
		Benchmark.table(this.report, title + ": hand-offs between the JVMs per second", "cross-JVM hand-offs/s",
				crossRates, null, "distlock-jdbc");
		Benchmark.table(this.report,
				title + ": hand-off latency p50 (release call to the next holder's acquire, any thread), ms", "ms", p50,
				null, null);
	}

	private Events.Summary twoJvms(String name, int threads) throws Exception {
		try (Lib lib = JdbcLib.create(name, this.server.jdbcUrl())) {
			lib.lock("warm-up").unlock();
			return HotKeyWorker.twoJvms(lib, this.server.jdbcUrl(), threads, WINDOW);
		}
	}

	/** J4: statements per uncontended cycle, as the server counted them. */
	private void statements(String label) throws Exception {
		StringBuilder rows = new StringBuilder();
		for (String name : JdbcLib.NAMES) {
			try (Lib lib = JdbcLib.create(name, this.server.jdbcUrl())) {
				for (int i = 0; i < 100; i++) {
					lib.lock("j4-uncontended").unlock();
				}
				this.server.resetStatements();
				for (int i = 0; i < CYCLES; i++) {
					lib.lock("j4-uncontended").unlock();
				}
				Map<String, Long> statements = new LinkedHashMap<>(this.server.statements());
				statements.keySet()
					.removeIf((sql) -> CONNECTION_SETUP.stream()
						.anyMatch((setup) -> sql.toLowerCase(Locale.ROOT).startsWith(setup)));
				long total = statements.values().stream().mapToLong(Long::longValue).sum();
				rows.append(String.format(Locale.ROOT, "| %s | %.2f | %s |%n", name, total / (double) CYCLES,
						describe(statements)));
			}
		}
		this.report.append("## J4 ")
			.append(label)
			.append(", statements per uncontended cycle\n\n")
			.append("1,000 lock+unlock cycles on one key by one thread after 100 to warm up, counted by ")
			.append(this.server.kind().equals("postgresql") ? "`pg_stat_statements`"
					: "the Performance Schema (`events_statements_summary_by_digest`)")
			.append("; statements a driver runs when the pool opens a connection are left out.\n\n")
			.append("| library | statements per cycle | statements (executions) |\n| --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	private static String describe(Map<String, Long> statements) {
		StringBuilder text = new StringBuilder();
		statements.forEach((sql, count) -> {
			String shown = sql.replaceAll("\\s+", " ").replace("|", "\\|");
			if (shown.length() > 110) {
				shown = shown.substring(0, 107) + "...";
			}
			text.append((text.length() > 0) ? "; " : "").append('`').append(shown).append("` ").append(count);
		});
		return text.toString();
	}

}
