package dev.distlock.harness.fuzz;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.distlock.LockTemplate;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.support.RenewalScheduler;

/**
 * The second JVM of a cross-JVM fuzz test, for any store: builds its provider and counter
 * from the factories named on its command line, takes the lock once, prints
 * {@code READY}, waits for {@code GO} on standard input, runs the {@link FuzzLoop} and
 * prints its {@link FuzzLoop.Result} line.
 * <p>
 * Arguments are {@code key=value} ({@link WorkerArgs}): {@code provider},
 * {@code resources}, {@link #THREADS}, {@link #MILLIS}, and the store's and resource's
 * own settings.
 */
public final class FuzzWorker {

	/** Setting: worker threads. */
	public static final String THREADS = "fuzz.threads";

	/** Setting: how long the loop runs, in milliseconds. */
	public static final String MILLIS = "fuzz.millis";

	private FuzzWorker() {
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		int threads = (int) WorkerArgs.number(settings, THREADS);
		Duration duration = Duration.ofMillis(WorkerArgs.number(settings, MILLIS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		ResourceFactory resources = WorkerArgs.instance(settings, WorkerArgs.RESOURCES, ResourceFactory.class);
		RenewalScheduler scheduler = new RenewalScheduler();
		int exitCode = 0;
		try (SharedCounter counter = resources.sharedCounter(settings)) {
			LockTemplate template = Templates.of(Templates.answering(store, settings), scheduler);
			template.run("fuzz-warm-up", counter::read);
			System.out.println("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if ("GO".equals(in.readLine())) {
				System.out.println(FuzzLoop.run(List.of(template), counter, threads, duration).line());
			}
			else {
				exitCode = 2;
			}
		}
		finally {
			System.out.flush();
			scheduler.close();
			store.close();
		}
		System.exit(exitCode);
	}

}
