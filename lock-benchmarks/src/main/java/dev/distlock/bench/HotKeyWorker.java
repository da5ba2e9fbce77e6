package dev.distlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
	 * Runs {@code threads} threads on key {@code hot} here and as many in a second JVM of
	 * library {@code lib.name()} on {@code target} (a Redis port or a JDBC URL). The
	 * second JVM warms up, says {@code READY}, and is then given the start moment, so
	 * both start together with no fixed lead for its JVM start. {@code lib} is warmed up
	 * already.
	 */
	static Events.Summary twoJvms(Lib lib, String target, int threads, Duration window) throws Exception {
		Path file = Files.createTempFile("distlock-bench", ".events");
		Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx512m", "-cp", System.getProperty("java.class.path"), HotKeyWorker.class.getName(), lib.name(),
				target, Integer.toString(threads), "-", Long.toString(window.toMillis()), file.toString())
			.redirectError(ProcessBuilder.Redirect.DISCARD)
			.start();
		try {
			awaitReady(child, lib.name());
			long start = System.nanoTime() + 200_000_000L;
			try (Writer toChild = new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8)) {
				toChild.write(start + "\n");
			}
			Events events = run(lib, "hot", threads, 0, start, window);
			if (!child.waitFor(120, TimeUnit.SECONDS) || child.exitValue() != 0) {
				throw new IllegalStateException("The second JVM for " + lib.name() + " failed");
			}
			events.read(file);
			return events.summarize();
		}
		finally {
			child.destroyForcibly();
			Files.deleteIfExists(file);
		}
	}

	private static void awaitReady(Process child, String name) throws IOException {
		BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
		String line;
		while ((line = in.readLine()) != null) {
			if (line.equals("READY")) {
				// the rest of its output is not read: drained so that the child never
				// blocks
				Thread drain = new Thread(() -> {
					try {
						child.getInputStream().transferTo(OutputStream.nullOutputStream());
					}
					catch (IOException ex) {
						// the child went away
					}
				}, "bench-child-output");
				drain.setDaemon(true);
				drain.start();
				return;
			}
		}
		throw new IllegalStateException("The second JVM for " + name + " exited before it was ready");
	}

	/**
	 * The first lock of a fresh JVM: its first connection can take longer than a store
	 * timeout on a loaded machine, so it is tried a few times.
	 */
	private static void warmUp(Lib lib) throws Exception {
		for (int attempt = 1;; attempt++) {
			try {
				lib.lock("warm-up-child").unlock();
				return;
			}
			catch (RuntimeException ex) {
				if (attempt == 5) {
					throw ex;
				}
			}
		}
	}

	/**
	 * Arguments: library, Redis port or JDBC URL, threads, start
	 * ({@code System.nanoTime}, or {@code -} to print {@code READY} once warmed up and
	 * read it from standard input), millis, output file.
	 */
	public static void main(String[] args) throws Exception {
		try (Lib lib = JdbcLib.isJdbc(args[0]) ? JdbcLib.create(args[0], args[1])
				: Lib.create(args[0], Integer.parseInt(args[1]))) {
			warmUp(lib);
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
