package dev.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.test.TestingServer;

/**
 * distlock's ZooKeeper read-write lock side by side with Curator's
 * {@code InterProcessReadWriteLock} on one in-process ZooKeeper server (127.0.0.1):
 * uncontended read-lock and write-lock cycles per second (one thread), the ZooKeeper
 * operations per cycle (the packets the server received, from {@code srvr}), and one key
 * shared by two clients of two threads each (three readers, one writer) for the
 * acquisitions per second of each side. Writes {@code RESULTS-zookeeper-rw.md}.
 */
public final class ZookeeperReadWriteBenchmark {

	static final List<String> NAMES = List.of("curator-rw", "distlock");

	private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);

	private static final Duration WINDOW = Duration.ofMillis(Long.getLong("bench.window-ms", 3000));

	private static final String[] COLUMNS = { "read cycles/s", "ops per read cycle", "write cycles/s",
			"ops per write cycle", "mixed reads/s", "mixed writes/s" };

	private ZookeeperReadWriteBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		try (TestingServer server = ZookeeperBenchmark.startServer()) {
			String connect = server.getConnectString();
			Map<String, List<double[]>> results = new ConcurrentHashMap<>();
			for (int round = 1; round <= ROUNDS; round++) {
				for (String name : NAMES) {
					double[] row = new double[COLUMNS.length];
					try (RwLib lib = RwLib.create(name, connect)) {
						row[0] = cycles(lib, true);
						row[1] = opsPerCycle(lib, true, server.getPort());
						row[2] = cycles(lib, false);
						row[3] = opsPerCycle(lib, false, server.getPort());
					}
					mixed(name, connect, row);
					results.computeIfAbsent(name, (k) -> new ArrayList<>()).add(row);
					System.out.printf(
							"round %d %s: read %.0f/s (%.2f ops), write %.0f/s (%.2f ops), mixed %.0f reads/s %.0f writes/s%n",
							round, name, row[0], row[1], row[2], row[3], row[4], row[5]);
				}
			}
			write(Path.of(args[0]), results);
		}
	}

	/** One thread, one key: read (or write) lock and release for the window. */
	private static double cycles(RwLib lib, boolean read) throws Exception {
		String key = read ? "uncontended-read" : "uncontended-write";
		for (int i = 0; i < 200; i++) {
			lib.lock(key, read).unlock();
		}
		long cycles = 0;
		long start = System.nanoTime();
		long end = start + WINDOW.toNanos();
		while (System.nanoTime() - end < 0) {
			lib.lock(key, read).unlock();
			cycles++;
		}
		return cycles / ((System.nanoTime() - start) / 1e9);
	}

	/** Packets the server received per uncontended cycle, over 500 cycles. */
	private static double opsPerCycle(RwLib lib, boolean read, int port) throws Exception {
		String key = read ? "counted-read" : "counted-write";
		lib.lock(key, read).unlock();
		long before = ZookeeperBenchmark.received(port);
		for (int i = 0; i < 500; i++) {
			lib.lock(key, read).unlock();
		}
		return (ZookeeperBenchmark.received(port) - before) / 500.0;
	}

	/**
	 * Two clients of two threads each on one key: three threads read, one writes, each
	 * taking and releasing its lock in a loop for the window.
	 */
	private static void mixed(String name, String connect, double[] row) throws Exception {
		AtomicLong reads = new AtomicLong();
		AtomicLong writes = new AtomicLong();
		try (RwLib first = RwLib.create(name, connect); RwLib second = RwLib.create(name, connect)) {
			first.lock("warm-up", false).unlock();
			second.lock("warm-up", false).unlock();
			long end = System.nanoTime() + WINDOW.toNanos();
			List<Thread> threads = new ArrayList<>();
			for (int i = 0; i < 4; i++) {
				RwLib lib = (i % 2 == 0) ? first : second;
				boolean read = i != 3;
				AtomicLong counter = read ? reads : writes;
				Thread thread = new Thread(() -> {
					try {
						while (System.nanoTime() - end < 0) {
							lib.lock("mixed", read).unlock();
							counter.incrementAndGet();
						}
					}
					catch (Exception ex) {
						throw new IllegalStateException(ex);
					}
				}, "mixed-" + i);
				thread.start();
				threads.add(thread);
			}
			for (Thread thread : threads) {
				thread.join(TimeUnit.MINUTES.toMillis(2));
			}
		}
		row[4] = reads.get() / (WINDOW.toMillis() / 1000.0);
		row[5] = writes.get() / (WINDOW.toMillis() / 1000.0);
	}

	private static void write(Path file, Map<String, List<double[]>> results) throws IOException {
		StringBuilder out = new StringBuilder();
		out.append("# ZooKeeper read-write lock benchmark results\n\n");
		out.append(
				"Written by `ZookeeperReadWriteBenchmark` (`./mvnw -q -pl lock-benchmarks -am verify -Pbenchmark`):\n");
		out.append("one in-process ZooKeeper ").append(org.apache.zookeeper.Version.getFullVersion().split("-")[0]);
		out.append(" server on 127.0.0.1, JDK ").append(System.getProperty("java.version")).append(", ");
		out.append(Runtime.getRuntime().availableProcessors()).append(" cores; ").append(ROUNDS);
		out.append(" rounds of ").append(WINDOW.toMillis()).append(" ms windows, median (min–max); no fsync\n");
		out.append(
				"(`zookeeper.forceSync=no`). A cycle is one lock and one release on one thread; operations are the\n");
		out.append(
				"packets the server received (`srvr`) per cycle. Mixed: one key, two clients of two threads each,\n");
		out.append("three threads reading and one writing in a loop. Curator's `InterProcessReadWriteLock` is one\n");
		out.append("instance per key and client, shared by its threads; distlock is its template with the starter's\n");
		out.append("defaults (`mode = READ` for reads).\n\n");
		out.append("| library |");
		for (String column : COLUMNS) {
			out.append(' ').append(column).append(" |");
		}
		out.append("\n| --- |").append(" --- |".repeat(COLUMNS.length)).append('\n');
		for (String name : NAMES) {
			out.append("| ").append(name);
			ZookeeperBenchmark.appendMedians(out, results.get(name), COLUMNS.length,
					(column) -> (column == 1 || column == 3) ? "%.2f" : "%.0f");
		}
		Files.writeString(file, out.toString());
		System.out.print(out);
	}

	/** A read-write lock library, one client per instance. */
	interface RwLib extends AutoCloseable {

		static RwLib create(String name, String connect) {
			return switch (name) {
				case "curator-rw" -> new CuratorReadWrite(connect);
				case "distlock" -> new DistlockReadWrite(connect);
				default -> throw new IllegalArgumentException("Unknown library " + name);
			};
		}

		/** Takes the read (or write) side of {@code key}, blocking. */
		Lib.Unlock lock(String key, boolean read) throws Exception;

		@Override
		void close();

	}

	/** Curator's InterProcessReadWriteLock, one per key per client. */
	static final class CuratorReadWrite implements RwLib {

		private final CuratorFramework client;

		private final Map<String, InterProcessReadWriteLock> locks = new ConcurrentHashMap<>();

		CuratorReadWrite(String connect) {
			this.client = ZookeeperBenchmark.startedClient(connect);
		}

		@Override
		public Lib.Unlock lock(String key, boolean read) throws Exception {
			InterProcessReadWriteLock lock = this.locks.computeIfAbsent(key,
					(k) -> new InterProcessReadWriteLock(this.client, "/curator-rw/" + k));
			InterProcessMutex side = read ? lock.readLock() : lock.writeLock();
			side.acquire();
			return side::release;
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

	/**
	 * distlock's template over its ZooKeeper store, with the defaults of the starter (as
	 * {@link ZookeeperBenchmark}'s).
	 */
	static final class DistlockReadWrite implements RwLib {

		private static final LockOptions READ = LockOptions.builder().mode(LockMode.READ).build();

		private final ZookeeperBenchmark.ZkDistlock lib;

		DistlockReadWrite(String connect) {
			this.lib = new ZookeeperBenchmark.ZkDistlock(connect);
		}

		@Override
		public Lib.Unlock lock(String key, boolean read) {
			return this.lib.lock(key, read ? READ : LockOptions.defaults());
		}

		@Override
		public void close() {
			this.lib.close();
		}

	}

}
