package dev.distlock.bench;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.zookeeper.ZookeeperLockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * distlock's ZooKeeper store side by side with Curator's {@code InterProcessMutex} on one
 * in-process ZooKeeper server (127.0.0.1): uncontended cycles per second (one thread),
 * one hot key across two JVMs of two threads each (acquisitions per second, hand-off
 * latency), and ZooKeeper operations per cycle, counted by the server (the packets it
 * received, from {@code srvr}). Writes {@code RESULTS-zookeeper.md}. Spring Integration's
 * {@code ZookeeperLockRegistry} is not compared: {@code spring-integration-zookeeper} 7.x
 * is not on Maven Central (and it wraps {@code InterProcessMutex}).
 */
public final class ZookeeperBenchmark {

	static final List<String> NAMES = List.of("curator-mutex", "distlock");

	private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.window-ms", 3000));

	private static final int THREADS = 2;

	private ZookeeperBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		if (args[0].equals("child")) {
			child(args);
			return;
		}
		try (TestingServer server = startServer()) {
			String connect = server.getConnectString();
			Map<String, List<double[]>> results = new ConcurrentHashMap<>();
			for (int round = 1; round <= ROUNDS; round++) {
				for (String name : NAMES) {
					double[] row = new double[6];
					try (ZkLib lib = ZkLib.create(name, connect)) {
						row[0] = uncontended(lib);
						row[1] = opsPerCycle(lib, server.getPort());
					}
					Events.Summary hot = twoJvms(name, connect, server.getPort(), row);
					row[2] = hot.acquisitions() / (WINDOW.toMillis() / 1000.0);
					row[3] = hot.p50Millis();
					row[4] = hot.p99Millis();
					results.computeIfAbsent(name, (k) -> new ArrayList<>()).add(row);
					System.out.printf(
							"round %d %s: %.0f cycles/s, %.2f ops/cycle, hot %.0f acq/s p50 %.3f ms, %.2f ops/acq%n",
							round, name, row[0], row[1], row[2], row[3], row[5]);
				}
			}
			write(Path.of(args[0]), results);
		}
	}

	/**
	 * An in-process server on 127.0.0.1 that answers {@code srvr} and does not fsync its
	 * log: the benchmarks measure the lock algorithms, not this machine's disk.
	 */
	static TestingServer startServer() throws Exception {
		System.setProperty("zookeeper.admin.enableServer", "false");
		System.setProperty("zookeeper.forceSync", "no");
		return new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, Map.of("clientPortAddress",
				"127.0.0.1", "admin.enableServer", "false", "4lw.commands.whitelist", "srvr"), "127.0.0.1"), true);
	}

	/** A started, connected client with Curator's default timeouts. */
	static CuratorFramework startedClient(String connect) {
		CuratorFramework client = CuratorFrameworkFactory.newClient(connect, new ExponentialBackoffRetry(100, 5));
		client.start();
		try {
			client.blockUntilConnected(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return client;
	}

	/** Appends a cell per column: the median over the rounds, then (min–max). */
	static void appendMedians(StringBuilder out, List<double[]> rows, int columns, IntFunction<String> format) {
		for (int column = 0; column < columns; column++) {
			List<Double> values = new ArrayList<>();
			for (double[] row : rows) {
				values.add(row[column]);
			}
			Collections.sort(values);
			String cell = format.apply(column);
			out.append(" | ")
				.append(String.format(cell, values.get(values.size() / 2)))
				.append(" (")
				.append(String.format(cell, values.get(0)))
				.append("–")
				.append(String.format(cell, values.get(values.size() - 1)))
				.append(")");
		}
		out.append(" |\n");
	}

	/** One thread, one key: lock and release for the window. */
	private static double uncontended(ZkLib lib) throws Exception {
		for (int i = 0; i < 200; i++) {
			lib.lock("uncontended").unlock();
		}
		long cycles = 0;
		long start = System.nanoTime();
		long end = start + WINDOW.toNanos();
		while (System.nanoTime() - end < 0) {
			lib.lock("uncontended").unlock();
			cycles++;
		}
		return cycles / ((System.nanoTime() - start) / 1e9);
	}

	/** Packets the server received per uncontended cycle, over 500 cycles. */
	private static double opsPerCycle(ZkLib lib, int port) throws Exception {
		long before = received(port);
		for (int i = 0; i < 500; i++) {
			lib.lock("counted").unlock();
		}
		return (received(port) - before) / 500.0;
	}

	private static Events.Summary twoJvms(String name, String connect, int port, double[] row) throws Exception {
		Path file = Files.createTempFile("distlock-zk-bench", ".events");
		long start = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
		Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-cp", System.getProperty("java.class.path"), ZookeeperBenchmark.class.getName(), "child",
				name, connect, Integer.toString(THREADS), Long.toString(start), Long.toString(WINDOW.toMillis()),
				file.toString())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		try (ZkLib lib = ZkLib.create(name, connect)) {
			lib.lock("warm-up").unlock();
			LockSupportUntil.until(start - TimeUnit.MILLISECONDS.toNanos(200));
			long before = received(port);
			Events events = HotKeyWorker.run(lib, "hot", THREADS, 0, start, WINDOW);
			if (!child.waitFor(120, TimeUnit.SECONDS) || child.exitValue() != 0) {
				throw new IllegalStateException("The second JVM for " + name + " failed");
			}
			events.read(file);
			Events.Summary summary = events.summarize();
			row[5] = (received(port) - before) / (double) Math.max(1, summary.acquisitions());
			return summary;
		}
		finally {
			child.destroyForcibly();
			Files.deleteIfExists(file);
		}
	}

	private static void child(String[] args) throws Exception {
		try (ZkLib lib = ZkLib.create(args[1], args[2])) {
			lib.lock("warm-up-child").unlock();
			Events events = HotKeyWorker.run(lib, "hot", Integer.parseInt(args[3]), 1000, Long.parseLong(args[4]),
					Duration.ofMillis(Long.parseLong(args[5])));
			events.write(Path.of(args[6]));
		}
		System.exit(0);
	}

	/** Packets the server has received, from its {@code srvr} answer. */
	static long received(int port) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			socket.getOutputStream().write("srvr".getBytes(StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			String reply = new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
			for (String line : reply.split("\n")) {
				if (line.startsWith("Received: ")) {
					return Long.parseLong(line.substring("Received: ".length()).trim());
				}
			}
			throw new IllegalStateException("No packet count in: " + reply);
		}
	}

	private static void write(Path file, Map<String, List<double[]>> results) throws IOException {
		StringBuilder out = new StringBuilder();
		out.append("# ZooKeeper benchmark results\n\n");
		out.append("Written by `ZookeeperBenchmark` (`./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark`): one\n");
		out.append("in-process ZooKeeper ").append(org.apache.zookeeper.Version.getFullVersion().split("-")[0]);
		out.append(" server on 127.0.0.1, JDK ").append(System.getProperty("java.version")).append(", ");
		out.append(Runtime.getRuntime().availableProcessors()).append(" cores; ").append(ROUNDS);
		out.append(" rounds of ").append(WINDOW.toMillis()).append(" ms windows, median (min–max); the server does\n");
		out.append("not fsync its log (`zookeeper.forceSync=no`), so disk speed does not mask the algorithms.\n");
		out.append("Operations are the packets the server received (`srvr`), per cycle; a cycle is one lock and\n");
		out.append("one release. The hot key: two JVMs with ").append(THREADS).append(" threads each.\n\n");
		out.append("| library | uncontended cycles/s | ops per uncontended cycle | hot key acquisitions/s |"
				+ " hand-off p50 ms | hand-off p99 ms | ops per hot-key acquisition |\n");
		out.append("| --- | --- | --- | --- | --- | --- | --- |\n");
		for (String name : NAMES) {
			out.append("| ").append(name);
			appendMedians(out, results.get(name), 6,
					(column) -> (column == 0 || column == 2) ? "%.0f" : (column == 1 || column == 5) ? "%.2f" : "%.3f");
		}
		Files.writeString(file, out.toString());
		System.out.print(out);
	}

	/** Parks until a moment on the monotonic clock. */
	private static final class LockSupportUntil {

		static void until(long nanos) {
			for (long left = nanos - System.nanoTime(); left > 0; left = nanos - System.nanoTime()) {
				java.util.concurrent.locks.LockSupport.parkNanos(left);
			}
		}

	}

	/** A ZooKeeper lock library, one client per instance. */
	abstract static class ZkLib implements Lib {

		final CuratorFramework client;

		ZkLib(String connect) {
			this.client = startedClient(connect);
		}

		static ZkLib create(String name, String connect) {
			return switch (name) {
				case "curator-mutex" -> new CuratorMutex(connect);
				case "distlock" -> new ZkDistlock(connect);
				default -> throw new IllegalArgumentException("Unknown library " + name);
			};
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

	/** Curator's InterProcessMutex, one per key per client, shared by its threads. */
	static final class CuratorMutex extends ZkLib {

		private final Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

		CuratorMutex(String connect) {
			super(connect);
		}

		@Override
		public String name() {
			return "curator-mutex";
		}

		@Override
		public Unlock lock(String key) throws Exception {
			InterProcessMutex mutex = this.mutexes.computeIfAbsent(key,
					(k) -> new InterProcessMutex(this.client, "/curator-locks/" + k));
			mutex.acquire();
			return mutex::release;
		}

	}

	/** distlock's template over its ZooKeeper store, with the defaults of the starter. */
	static final class ZkDistlock extends ZkLib {

		private final ZookeeperLockProvider provider;

		private final RenewalScheduler scheduler = new RenewalScheduler();

		private final DefaultLockTemplate template;

		ZkDistlock(String connect) {
			super(connect);
			this.provider = new ZookeeperLockProvider(this.client);
			this.template = new DefaultLockTemplate(this.provider, this.scheduler,
					LockOptions.builder()
						.waitTime(Duration.ofSeconds(60))
						.leaseTime(Duration.ofSeconds(30))
						.autoRenew(true)
						.retryInterval(Duration.ofMillis(100))
						.onLeaseLost(OnLeaseLost.FAIL_ON_EXIT)
						.fair(false)
						.build());
		}

		@Override
		public String name() {
			return "distlock";
		}

		@Override
		public Unlock lock(String key) {
			return lock(key, LockOptions.defaults());
		}

		Unlock lock(String key, LockOptions options) {
			Lease lease = this.template.acquire(key, options);
			return lease::release;
		}

		@Override
		public void close() {
			this.template.close();
			this.scheduler.close();
			this.provider.close();
			super.close();
		}

	}

}
