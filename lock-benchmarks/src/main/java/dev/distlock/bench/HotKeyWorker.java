package dev.distlock.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Threads that take one hot key in turn for a while, recording when each acquired and
 * when it began to release. Also the {@code main} of the second JVM in scenario S4.
 */
final class HotKeyWorker {

	private HotKeyWorker() {
	}

	/**
	 * Runs {@code threads} threads from {@code startNanos} for {@code duration}; holders
	 * are numbered from {@code firstHolder}.
	 */
	static Events run(Lib lib, String key, int threads, int firstHolder, long startNanos, Duration duration)
			throws InterruptedException {
		Events events = new Events();
		long end = startNanos + duration.toNanos();
		List<Thread> workers = new ArrayList<>();
		List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
		for (int t = 0; t < threads; t++) {
			long holder = firstHolder + t;
			Thread worker = new Thread(() -> {
				List<long[]> mine = new ArrayList<>();
				LockSupport.parkNanos(startNanos - System.nanoTime());
				try {
					while (System.nanoTime() - end < 0) {
						Lib.Unlock unlock = lib.lock(key);
						mine.add(new long[] { System.nanoTime(), holder, 1 });
						mine.add(new long[] { System.nanoTime(), holder, 0 });
						unlock.unlock();
					}
				}
				catch (Exception ex) {
					failures.add(ex.toString());
				}
				events.addAll(mine);
			});
			workers.add(worker);
			worker.start();
		}
		for (Thread worker : workers) {
			worker.join(duration.plusSeconds(90).toMillis());
		}
		if (!failures.isEmpty()) {
			throw new IllegalStateException(lib.name() + " failed: " + failures.get(0));
		}
		return events;
	}

	/**
	 * Arguments: library, Redis port or JDBC URL, threads, start
	 * ({@code System.nanoTime}, or {@code -} to print {@code READY} once warmed up and
	 * read it from standard input), millis, output file.
	 */
	public static void main(String[] args) throws Exception {
		try (Lib lib = JdbcLib.isJdbc(args[0]) ? JdbcLib.create(args[0], args[1])
				: Lib.create(args[0], Integer.parseInt(args[1]))) {
			lib.lock("warm-up-child").unlock();
			System.out.println("READY");
			System.out.flush();
			long start = "-".equals(args[3])
					? Long.parseLong(
							new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine().trim())
					: Long.parseLong(args[3]);
			Events events = run(lib, "hot", Integer.parseInt(args[2]), 1000, start,
					Duration.ofMillis(Long.parseLong(args[4])));
			events.write(Path.of(args[5]));
		}
		System.exit(0);
	}

}
