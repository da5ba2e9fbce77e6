package dev.distlock.harness.fault;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;

/**
 * The worker JVM of a fault run, a second application instance of any store: builds its
 * provider and resource from the factories named on its command line, runs the
 * {@link Workload} against the same store and resource, writes its operations to a file,
 * and prints what it left behind.
 * <p>
 * Arguments are {@code key=value} ({@link WorkerArgs}): {@code provider} and
 * {@code resources} (factory classes), the constants of this class, and the store's own
 * settings ({@link FaultTarget#settings()}). Prints {@code READY}, waits for {@code GO},
 * then prints {@code LEAKS ...}, any {@code ERROR ...} and {@code BACKEND ...} lines, and
 * {@code DONE}. {@link FaultRun} starts it; with {@link FamilyFaultRun#FAMILY} it runs
 * the lock family's workload instead ({@link FamilyFaultRun}).
 */
public final class FaultWorker {

	/** Setting: worker threads. */
	public static final String THREADS = "worker.threads";

	/** Setting: how long the threads work, in milliseconds. */
	public static final String MILLIS = "worker.millis";

	/** Setting: the workload's seed. */
	public static final String SEED = "worker.seed";

	/** Setting: the file the operations are written to. */
	public static final String HISTORY = "worker.history";

	/** Setting: how many lock keys ({@link Workload#KEYS}). */
	public static final String KEYS = "worker.keys";

	/** Setting: whether to acquire fairly. */
	public static final String FAIR = "worker.fair";

	private FaultWorker() {
	}

	/**
	 * Prints {@code READY} and waits for {@code GO} on standard input; exits with 2 on
	 * anything else.
	 */
	static void readySteadyGo() throws IOException {
		System.out.println("READY");
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		if (!"GO".equals(in.readLine())) {
			System.exit(2);
		}
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		if (settings.containsKey(FamilyFaultRun.FAMILY)) {
			FamilyFaultRun.worker(settings);
			return;
		}
		int threads = (int) WorkerArgs.number(settings, THREADS);
		Duration duration = Duration.ofMillis(WorkerArgs.number(settings, MILLIS));
		long seed = WorkerArgs.number(settings, SEED);
		Duration lease = Duration.ofMillis(WorkerArgs.number(settings, FaultRun.LEASE_MILLIS));
		Path history = Path.of(WorkerArgs.require(settings, HISTORY));
		System.setProperty("distlock.faults.keys", WorkerArgs.require(settings, KEYS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		ResourceFactory resources = WorkerArgs.instance(settings, WorkerArgs.RESOURCES, ResourceFactory.class);
		FencedResource resource = resources.fencedResource(settings);
		Workload workload = new Workload(1, store, settings, resource, lease,
				Boolean.parseBoolean(WorkerArgs.require(settings, FAIR)));
		try {
			readySteadyGo();
			workload.start(threads, System.nanoTime() + duration.toNanos(), seed);
			workload.join(duration.plus(lease.multipliedBy(4)).plusSeconds(30));
			try (Writer out = Files.newBufferedWriter(history)) {
				for (Op op : workload.ops()) {
					out.write(op.line());
					out.write('\n');
				}
			}
			System.out.println(workload.leaks().line());
			System.out.println("HANDOVERS " + workload.localHandovers());
			workload.errors().forEach((error, count) -> System.out.println("ERROR " + count + " " + error));
			workload.backendErrors()
				.forEach((error, count) -> System.out.println("BACKEND " + count + " " + error.replace('\n', ' ')));
			System.out.println("DONE");
		}
		finally {
			System.out.flush();
			workload.close();
			resource.close();
		}
		System.exit(0);
	}

}
