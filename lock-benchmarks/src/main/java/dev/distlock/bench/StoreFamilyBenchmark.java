package dev.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.zookeeper.ZookeeperLockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;

import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The lock family beyond the plain lock on ZooKeeper, PostgreSQL and MariaDB, distlock
 * side by side with the closest peer of each member on the same server in one run:
 * Curator's recipes on ZooKeeper; on the databases, Spring Integration's
 * {@code JdbcLockRegistry} for several keys (one lock per key, in sorted order) and
 * hand-written SQL for the read-write lock and the semaphore ({@link SqlFamily}), which
 * no library offers there. Writes {@code RESULTS-family-stores.md}.
 */
public final class StoreFamilyBenchmark {

	private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);

	/**
	 * Rounds run first and not counted: a cold first round (the JIT, the servers' caches)
	 * moved the medians from run to run.
	 */
	private static final int WARM_UP_ROUNDS = Integer.getInteger("bench.warm-up-rounds", 1);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.window-ms", 2000));

	private static final String[] COLUMNS = { "read cycles/s (1 thread)", "mixed reads/s", "mixed writes/s",
			"permit cycles/s (1 thread)", "hot semaphore permits/s", "3-key cycles/s (1 thread)",
			"overlapping 3-key acquisitions/s" };

	/** A new client of a library on the store under test. */
	@FunctionalInterface
	private interface Client {

		FamilyLib open() throws Exception;

	}

	private StoreFamilyBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS-family-stores.md");
		StringBuilder report = new StringBuilder("# The lock family on ZooKeeper and the databases\n\n");
		report.append("Written by `StoreFamilyBenchmark` (`./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark`) on ")
			.append(LocalDate.now())
			.append(": ")
			.append(Runtime.getRuntime().availableProcessors())
			.append(" cores, JDK ")
			.append(System.getProperty("java.version"))
			.append("; median (min–max) of ")
			.append(ROUNDS)
			.append(" rounds of ")
			.append(WINDOW.toMillis())
			.append(" ms windows, after ")
			.append(WARM_UP_ROUNDS)
			.append(" warm-up round(s) not counted. Every library on one server started by the harness, on loopback; a client is one")
			.append(" ZooKeeper session or one HikariCP pool with default settings. Mixed: one key, two clients of two")
			.append(" threads, three reading and one writing in a loop. Hot semaphore: two permits, two clients of")
			.append(" three threads. Overlapping: two clients of two threads, each call taking 3 of 6 keys at random")
			.append(" (sorted). distlock runs with the starter's defaults. `sql-table` and `pg-advisory` are the")
			.append(" hand-written SQL an application would write where no library offers the member; `si-jdbc` is")
			.append(" Spring Integration's `JdbcLockRegistry` taking each key in turn. A dash: the library has no such")
			.append(" member. On PostgreSQL the database is vacuumed before each library's turn.\n\n");
		for (String store : System.getProperty("bench.family-stores.stores", "zookeeper,postgresql,mariadb")
			.split(",")) {
			switch (store.trim()) {
				case "zookeeper" -> zookeeper(report);
				case "postgresql" -> database(report, PostgresServer.start());
				case "mariadb" -> database(report, MariaDbServer.start());
				default -> throw new IllegalArgumentException("Unknown store " + store);
			}
		}
		Files.writeString(output, report);
		System.out.print(report);
		System.exit(0);
	}

	private static void zookeeper(StringBuilder report) throws Exception {
		try (TestingServer server = ZookeeperBenchmark.startServer()) {
			String connect = server.getConnectString();
			Map<String, Client> clients = new LinkedHashMap<>();
			clients.put("curator", () -> new FamilyLib.Curator(connect));
			clients.put("distlock", () -> {
				CuratorFramework client = ZookeeperBenchmark.startedClient(connect);
				RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate template = new DefaultLockTemplate(new ZookeeperLockProvider(client), scheduler,
						defaults());
				return new FamilyLib.Distlock("distlock", template, () -> {
					scheduler.close();
					client.close();
				});
			});
			run(report, "ZooKeeper " + org.apache.zookeeper.Version.getFullVersion().split("-")[0], clients, () -> {
			});
		}
	}

	private static void database(StringBuilder report, DatabaseServer server) throws Exception {
		try (server) {
			boolean postgres = server.kind().equals("postgresql");
			Map<String, Client> clients = new LinkedHashMap<>();
			clients.put("distlock", () -> {
				HikariDataSource pool = server.newDataSource();
				JdbcLockProvider provider = new JdbcLockProvider(pool, "distlock_family_bench");
				provider.createTableIfMissing();
				RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler, defaults());
				return new FamilyLib.Distlock("distlock", template, () -> {
					scheduler.close();
					provider.close();
					pool.close();
				});
			});
			clients.put("sql-table", () -> new SqlFamily.Table(server.newDataSource(), postgres));
			if (postgres) {
				clients.put("pg-advisory", () -> new SqlFamily.Advisory(server.newDataSource()));
			}
			clients.put("si-jdbc", () -> integration(server.newDataSource(), postgres));
			Runnable beforeTurn = postgres ? () -> vacuum(server.dataSource()) : () -> {
			};
			run(report, (postgres ? "PostgreSQL " : "MariaDB ") + server.version(), clients, beforeTurn);
		}
	}

	/**
	 * Vacuums a PostgreSQL database, before each library's turn. Read holds, permits and
	 * the hand-written holds are rows inserted and deleted at every cycle; left to
	 * autovacuum, their dead rows make a turn's speed depend on how long ago the last
	 * autovacuum ran rather than on the library.
	 */
	private static void vacuum(DataSource dataSource) {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("VACUUM");
		}
		catch (SQLException ex) {
			throw new IllegalStateException("VACUUM before a turn failed", ex);
		}
	}

	private static LockOptions defaults() {
		return LockOptions.builder()
			.waitTime(Duration.ofSeconds(60))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.onLeaseLost(OnLeaseLost.FAIL_ON_EXIT)
			.fair(false)
			.build();
	}

	private static FamilyLib integration(HikariDataSource pool, boolean postgres) {
		new JdbcTemplate(pool).execute("CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL,"
				+ " REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36),"
				+ (postgres ? " CREATED_DATE TIMESTAMP NOT NULL, EXPIRED_AFTER TIMESTAMP NOT NULL,"
						: " CREATED_DATE DATETIME(6) NOT NULL, EXPIRED_AFTER DATETIME(6) NOT NULL,")
				+ " CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))");
		DefaultLockRepository repository = new DefaultLockRepository(pool);
		repository.setTransactionManager(new DataSourceTransactionManager(pool));
		repository.afterPropertiesSet();
		repository.afterSingletonsInstantiated();
		repository.start();
		return new FamilyLib.Registry("si-jdbc", new JdbcLockRegistry(repository), () -> {
			repository.close();
			pool.close();
		});
	}

	private static void run(StringBuilder report, String title, Map<String, Client> clients, Runnable beforeTurn)
			throws Exception {
		Map<String, List<double[]>> results = new LinkedHashMap<>();
		for (int round = 1 - WARM_UP_ROUNDS; round <= ROUNDS; round++) {
			for (Map.Entry<String, Client> entry : clients.entrySet()) {
				beforeTurn.run();
				double[] row = measure(entry.getValue());
				if (round > 0) {
					results.computeIfAbsent(entry.getKey(), (k) -> new ArrayList<>()).add(row);
				}
				System.out.printf("%s %s %s: %s%n", title, (round > 0) ? "round " + round : "warm-up", entry.getKey(),
						java.util.Arrays.toString(row));
			}
		}
		report.append("## ").append(title).append("\n\n| library |");
		for (String column : COLUMNS) {
			report.append(' ').append(column).append(" |");
		}
		report.append("\n| --- |").append(" --- |".repeat(COLUMNS.length)).append('\n');
		for (Map.Entry<String, List<double[]>> entry : results.entrySet()) {
			report.append("| ").append(entry.getKey());
			appendMedians(report, entry.getValue());
		}
		report.append('\n');
	}

	private static void appendMedians(StringBuilder out, List<double[]> rows) {
		for (int column = 0; column < COLUMNS.length; column++) {
			List<Double> values = new ArrayList<>();
			for (double[] row : rows) {
				values.add(row[column]);
			}
			values.sort(null);
			if (values.get(0).isNaN()) {
				out.append(" | –");
				continue;
			}
			out.append(String.format(" | %.0f (%.0f–%.0f)", values.get(values.size() / 2), values.get(0),
					values.get(values.size() - 1)));
		}
		out.append(" |\n");
	}

	/** One round of every scenario for one library; NaN where it lacks the member. */
	private static double[] measure(Client client) throws Exception {
		double[] row = new double[COLUMNS.length];
		try (FamilyLib first = client.open(); FamilyLib second = client.open()) {
			row[0] = single(() -> first.readWrite("rw-uncontended", true));
			double[] mixed = mixed(first, second);
			row[1] = mixed[0];
			row[2] = mixed[1];
			row[3] = single(() -> first.permit("permit-uncontended", 3));
			row[4] = shared(first, second, 3, (lib) -> lib.permit("permit-hot", 2));
			row[5] = single(() -> first.all(List.of("multi-a", "multi-b", "multi-c")));
			row[6] = shared(first, second, 2, (lib) -> lib.all(threeOfSix()));
		}
		return row;
	}

	private static List<String> threeOfSix() {
		List<String> keys = new ArrayList<>(List.of("m0", "m1", "m2", "m3", "m4", "m5"));
		java.util.Collections.shuffle(keys, ThreadLocalRandom.current());
		List<String> chosen = new ArrayList<>(keys.subList(0, 3));
		chosen.sort(null);
		return chosen;
	}

	@FunctionalInterface
	private interface Take {

		Lib.Unlock take() throws Exception;

	}

	@FunctionalInterface
	private interface TakeWith {

		Lib.Unlock take(FamilyLib lib) throws Exception;

	}

	/** Cycles per second of one thread, or NaN if the library lacks the member. */
	private static double single(Take take) throws Exception {
		try {
			take.take().unlock();
		}
		catch (UnsupportedOperationException ex) {
			return Double.NaN;
		}
		long end = System.nanoTime() + Duration.ofMillis(300).toNanos();
		while (System.nanoTime() - end < 0) {
			take.take().unlock();
		}
		long cycles = 0;
		long start = System.nanoTime();
		end = start + WINDOW.toNanos();
		while (System.nanoTime() - end < 0) {
			take.take().unlock();
			cycles++;
		}
		return cycles / ((System.nanoTime() - start) / 1e9);
	}

	/** Reads and writes per second on one key: three reading threads, one writing. */
	private static double[] mixed(FamilyLib first, FamilyLib second) throws Exception {
		try {
			first.readWrite("rw-warm-up", true).unlock();
		}
		catch (UnsupportedOperationException ex) {
			return new double[] { Double.NaN, Double.NaN };
		}
		second.readWrite("rw-warm-up", true).unlock();
		second.readWrite("rw-warm-up", false).unlock();
		AtomicLong reads = new AtomicLong();
		AtomicLong writes = new AtomicLong();
		List<Runnable> loops = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			FamilyLib lib = (i % 2 == 0) ? first : second;
			boolean read = i != 3;
			AtomicLong counter = read ? reads : writes;
			loops.add(loop(() -> lib.readWrite("rw-mixed", read), counter));
		}
		runFor(loops);
		double seconds = WINDOW.toNanos() / 1e9;
		return new double[] { reads.get() / seconds, writes.get() / seconds };
	}

	/** Acquisitions per second by {@code threadsEach} threads on each of two clients. */
	private static double shared(FamilyLib first, FamilyLib second, int threadsEach, TakeWith take) throws Exception {
		try {
			take.take(first).unlock();
		}
		catch (UnsupportedOperationException ex) {
			return Double.NaN;
		}
		take.take(second).unlock();
		AtomicLong count = new AtomicLong();
		List<Runnable> loops = new ArrayList<>();
		for (int i = 0; i < 2 * threadsEach; i++) {
			FamilyLib lib = (i % 2 == 0) ? first : second;
			loops.add(loop(() -> take.take(lib), count));
		}
		runFor(loops);
		return count.get() / (WINDOW.toNanos() / 1e9);
	}

	private static final ThreadLocal<Long> END = new ThreadLocal<>();

	private static Runnable loop(Take take, AtomicLong counter) {
		return () -> {
			try {
				while (System.nanoTime() - END.get() < 0) {
					take.take().unlock();
					counter.incrementAndGet();
				}
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		};
	}

	private static void runFor(List<Runnable> loops) throws InterruptedException, IOException {
		long end = System.nanoTime() + WINDOW.toNanos();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		List<Thread> threads = new ArrayList<>();
		for (Runnable loop : loops) {
			Thread thread = new Thread(() -> {
				END.set(end);
				loop.run();
			}, "family-bench");
			thread.setUncaughtExceptionHandler((t, ex) -> failure.compareAndSet(null, ex));
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join(TimeUnit.MINUTES.toMillis(3));
		}
		if (failure.get() != null) {
			throw new IOException("A benchmark thread failed", failure.get());
		}
	}

}
