package dev.distlock.bench;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.redisson.api.RLock;

/**
 * What each library costs the server, read from the server itself: {@code INFO cpu} (the
 * server's user and system CPU time) and {@code INFO commandstats} (calls and time per
 * command, the commands run inside scripts included), before and after each run. And the
 * fair hand-off, where distlock's release grants the lock to the queued waiter.
 */
final class ServerCost {

	private final int port;

	private final Duration window;

	private final StringBuilder report;

	private final Targets targets;

	ServerCost(int port, Duration window, StringBuilder report, Targets targets) {
		this.port = port;
		this.window = window;
		this.report = report;
		this.targets = targets;
	}

	void run() throws Exception {
		distinctKeys();
		uncontended();
		fairHandoff();
	}

	/** The server's CPU and commandstats at one moment. */
	record Snapshot(double cpuMicros, Map<String, long[]> commands) {

		/** Calls and usec per command since {@code before}, INFO itself left out. */
		Map<String, long[]> since(Snapshot before) {
			Map<String, long[]> delta = new TreeMap<>();
			this.commands.forEach((name, now) -> {
				long[] then = before.commands.getOrDefault(name, new long[2]);
				if (now[0] - then[0] > 0 && !name.equals("info")) {
					delta.put(name, new long[] { now[0] - then[0], now[1] - then[1] });
				}
			});
			return delta;
		}

	}

	Snapshot snapshot() {
		try (Lib.Raw raw = new Lib.Raw(this.port)) {
			double cpu = 0;
			for (String line : raw.info("cpu").split("\r?\n")) {
				if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
					cpu += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim()) * 1e6;
				}
			}
			Map<String, long[]> commands = new TreeMap<>();
			for (String line : raw.info("commandstats").split("\r?\n")) {
				if (!line.startsWith("cmdstat_")) {
					continue;
				}
				String name = line.substring("cmdstat_".length(), line.indexOf(':'));
				long calls = 0;
				long usec = 0;
				for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
					if (field.startsWith("calls=")) {
						calls = Long.parseLong(field.substring("calls=".length()));
					}
					else if (field.startsWith("usec=")) {
						usec = Long.parseLong(field.substring("usec=".length()));
					}
				}
				commands.put(name, new long[] { calls, usec });
			}
			return new Snapshot(cpu, commands);
		}
	}

	private static long calls(Map<String, long[]> commands) {
		return commands.values().stream().mapToLong((c) -> c[0]).sum();
	}

	/**
	 * The calls made by scripts: every command but the ones a client sends to run a
	 * script or to set up its connection.
	 */
	private static long insideScripts(Map<String, long[]> commands) {
		return commands.entrySet()
			.stream()
			.filter((entry) -> !CLIENT_ONLY.contains(entry.getKey()))
			.mapToLong((entry) -> entry.getValue()[0])
			.sum();
	}

	private static final java.util.Set<String> CLIENT_ONLY = java.util.Set.of("eval", "evalsha", "eval_ro",
			"evalsha_ro", "fcall", "fcall_ro", "hello", "script|load", "ping", "client|setinfo", "client|setname");

	private static long usec(Map<String, long[]> commands) {
		return commands.values().stream().mapToLong((c) -> c[1]).sum();
	}

	private static String counts(Map<String, long[]> commands, double per) {
		StringBuilder text = new StringBuilder();
		commands.forEach((name, c) -> text.append(text.isEmpty() ? "" : ", ")
			.append(name)
			.append(' ')
			.append(String.format(Locale.ROOT, "%.2f", c[0] / per)));
		return text.toString();
	}

	/** S2 cost: 16 threads on keys of their own, one window per library. */
	private void distinctKeys() throws Exception {
		StringBuilder rows = new StringBuilder();
		for (String name : Lib.NAMES) {
			try (Lib lib = Lib.create(name, this.port)) {
				Benchmark.cycles(lib, 16, Duration.ofMillis(500));
				Snapshot before = snapshot();
				long clientBefore = clientCpuNanos();
				long cycles = Benchmark.cycles(lib, 16, this.window);
				long clientAfter = clientCpuNanos();
				Snapshot after = snapshot();
				Map<String, long[]> commands = after.since(before);
				rows.append(String.format(Locale.ROOT, "| %s | %,.0f | %.1f | %.1f | %.1f | %.2f | %s |%n", name,
						cycles / (this.window.toNanos() / 1e9), (after.cpuMicros() - before.cpuMicros()) / cycles,
						(clientAfter - clientBefore) / 1e3 / cycles, usec(commands) / (double) cycles,
						calls(commands) / (double) cycles, counts(commands, cycles)));
			}
		}
		this.report.append("## S2 server cost: 16 threads, a fixed key per thread, one window per library\n\n")
			.append("Redis CPU per cycle is the server's user + system CPU time (`INFO cpu`) over the window divided")
			.append(" by the cycles; command time is `INFO commandstats` usec (inside scripts included); commands")
			.append(" per cycle count every command the server ran, the ones inside scripts included. Client CPU per")
			.append(" cycle is this JVM's process CPU time over the window (all its threads: the library's, Lettuce's")
			.append(" event loops, the workers) divided by the cycles. On a machine of few cores the two CPU columns")
			.append(" added up bound the rate.\n\n")
			.append("| library | cycles/s | Redis CPU us per cycle | client CPU us per cycle | command usec per cycle |")
			.append(" commands per cycle | per command |\n| --- | --- | --- | --- | --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	private static long clientCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	/** S5 cost: 1,000 uncontended cycles by one thread. */
	private void uncontended() throws Exception {
		StringBuilder rows = new StringBuilder();
		int cycles = 1000;
		for (String name : Lib.NAMES) {
			try (Lib lib = Lib.create(name, this.port)) {
				for (int i = 0; i < 100; i++) {
					lib.lock("s5c-warm").unlock();
				}
				Snapshot before = snapshot();
				for (int i = 0; i < cycles; i++) {
					lib.lock("s5c-uncontended").unlock();
				}
				Snapshot after = snapshot();
				Map<String, long[]> commands = after.since(before);
				if (name.equals("distlock")) {
					this.targets.uncontendedCommands(insideScripts(commands) / (double) cycles);
				}
				rows.append(String.format(Locale.ROOT, "| %s | %.2f | %.1f | %.1f | %s |%n", name,
						calls(commands) / (double) cycles, usec(commands) / (double) cycles,
						(after.cpuMicros() - before.cpuMicros()) / cycles, counts(commands, cycles)));
			}
		}
		this.report.append("## S5 server cost: commands per uncontended cycle, inside scripts included\n\n")
			.append("1,000 lock+unlock cycles on one key by one thread; `INFO commandstats` before and after.\n\n")
			.append("| library | commands per cycle | command usec per cycle | Redis CPU us per cycle | per command |\n")
			.append("| --- | --- | --- | --- | --- |\n")
			.append(rows)
			.append('\n');
	}

	/**
	 * Fair hand-off: two clients, one thread each, taking one fair lock in turn: distlock
	 * (its release grants the lock to the queued waiter) against Redisson's
	 * {@code RFairLock}; the plain locks of both beside them.
	 */
	private void fairHandoff() throws Exception {
		Map<String, double[]> p50 = new LinkedHashMap<>();
		StringBuilder rows = new StringBuilder();
		for (String name : List.of("distlock-fair", "redisson-fair", "distlock", "redisson")) {
			try (Lib first = fair(name); Lib second = fair(name)) {
				first.lock("fair-warm").unlock();
				second.lock("fair-warm").unlock();
				Snapshot before = snapshot();
				long start = System.nanoTime() + 20_000_000L;
				Events events = new Events();
				Thread other = new Thread(() -> {
					try {
						events.addAll(HotKeyWorker.run(second, "fair-hot", 1, 1000, start, this.window).list());
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				});
				other.start();
				events.addAll(HotKeyWorker.run(first, "fair-hot", 1, 0, start, this.window).list());
				other.join();
				Snapshot after = snapshot();
				Events.Summary summary = events.summarize();
				Map<String, long[]> commands = after.since(before);
				long handoffs = Math.max(1, summary.handoffs());
				p50.put(name, new double[] { summary.p50Millis() });
				rows.append(String.format(Locale.ROOT, "| %s | %.3f | %.3f | %d | %.2f | %.1f |%n", name,
						summary.p50Millis(), summary.p99Millis(), summary.handoffs(),
						calls(commands) / (double) handoffs, (after.cpuMicros() - before.cpuMicros()) / handoffs));
			}
		}
		this.report.append("## Fair hand-off (grant on release): two clients, one thread each, one key\n\n")
			.append("Wake-up is the time from the holder's release call to the other client's acquire returning.")
			.append(" distlock-fair's release grants the lock to the queued waiter in Redis and tells it, so the")
			.append(" waiter holds it without another acquire; Redisson's `RFairLock` wakes the waiter, which then")
			.append(" acquires. Commands per hand-off include those inside scripts (`INFO commandstats`).\n\n")
			.append("| library | wake-up p50, ms | p99, ms | hand-offs | commands per hand-off |")
			.append(" Redis CPU us per hand-off |\n| --- | --- | --- | --- | --- | --- |\n")
			.append(rows);
		double distlock = p50.get("distlock-fair")[0];
		double redisson = p50.get("redisson-fair")[0];
		this.targets.fairWakeUp(distlock, redisson);
		this.report.append(String.format(Locale.ROOT,
				"%nFair wake-up p50, distlock / Redisson: %.2f (target: at most 0.5)%n%n", distlock / redisson));
	}

	private Lib fair(String name) {
		return switch (name) {
			case "distlock-fair" ->
				new Lib.Distlock(this.port, Lib.Distlock.options(Duration.ofSeconds(30), true), "distlock-fair");
			case "redisson-fair" -> new FairRedisson(this.port);
			default -> Lib.create(name, this.port);
		};
	}

	/** Redisson's {@code RFairLock}. */
	static final class FairRedisson implements Lib {

		private final Lib.RedissonLib redisson;

		FairRedisson(int port) {
			this.redisson = new Lib.RedissonLib(port, 30_000);
		}

		@Override
		public String name() {
			return "redisson-fair";
		}

		@Override
		public Unlock lock(String key) {
			RLock lock = this.redisson.client.getFairLock("redisson:" + key);
			lock.lock();
			return lock::unlock;
		}

		@Override
		public void close() {
			this.redisson.close();
		}

	}

}
