package dev.distlock.harness.fault;

import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.FaultLog;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;

/**
 * A fault class run end to end over the lock family, as {@link FaultRun} runs it over the
 * mutex and with the same parts: the store's {@link FaultScenario} and
 * {@link FaultTarget}, its seeded {@link FaultSchedule}, and a worker JVM
 * ({@link FaultWorker}, told by {@link #FAMILY} to run the family's workload). Both JVMs
 * run the {@link FamilyFaultWorkload} (read-write lock, semaphore, multi-key locks over
 * overlapping keys, latch rounds across the two JVMs); the worker writes each event as it
 * happens, so that a worker killed with {@code kill -9} ({@code KILL} through
 * {@link FaultSchedule#signalWorker}) leaves its history up to its death. The
 * {@link FamilyFaultReport} then checks one merged history.
 */
public final class FamilyFaultRun {

	/** The setting telling {@link FaultWorker} to run the family's workload. */
	public static final String FAMILY = "worker.family";

	/** Threads of each kind in this JVM ({@code distlock.famfaults.threads}, 2). */
	private static final int THREADS = Integer.getInteger("distlock.famfaults.threads", 2);

	private FamilyFaultRun() {
	}

	/**
	 * Runs {@code fault} for {@code duration} over the family, its faults drawn from
	 * {@code seed}.
	 */
	public static <T extends FaultTarget> FamilyFaultReport run(FaultScenario<T> fault, Duration duration, long seed)
			throws Exception {
		Duration lease = FaultRun.LEASE;
		FaultLog log = new FaultLog(seed);
		Path history = Files.createTempFile("distlock-famfaults-" + fault.name(), ".ops");
		try (T target = fault.start()) {
			Map<String, String> settings = new LinkedHashMap<>(target.settings());
			settings.put(FaultRun.LEASE_MILLIS, Long.toString(lease.toMillis()));
			settings.put(FaultRun.CLIENT_DEFAULTS, Boolean.toString(fault.clientDefaults()));
			settings.put(FaultRun.HANDOVER, Boolean.toString(fault.inModel()));
			List<String> fencedKeys = new ArrayList<>();
			fencedKeys.add(FamilyFaultWorkload.RW_KEY);
			for (int k = 0; k < FamilyFaultWorkload.MULTI_KEYS; k++) {
				fencedKeys.add(FamilyFaultWorkload.multiKey(k));
			}
			long[] accepted = new long[fencedKeys.size()];
			long[] values = new long[fencedKeys.size()];
			List<FamilyOp> ops = new ArrayList<>();
			List<String> errors = new ArrayList<>();
			StringBuilder leakDetail = new StringBuilder();
			long leaks;
			FencedResource resource = target.newResourceFactory().fencedResource(settings);
			FamilyFaultWorkload workload = new FamilyFaultWorkload(0, target.newProviderFactory(), settings, resource,
					lease, null);
			Map<String, String> workerSettings = new LinkedHashMap<>(target.childSettings());
			workerSettings.putAll(settings);
			workerSettings.put(FAMILY, "true");
			workerSettings.put(FaultWorker.THREADS, Integer.toString(THREADS));
			workerSettings.put(FaultWorker.MILLIS, Long.toString(duration.toMillis()));
			workerSettings.put(FaultWorker.SEED, Long.toString(seed + 1));
			workerSettings.put(FaultWorker.HISTORY, history.toString());
			AtomicBoolean killed = new AtomicBoolean();
			try (ChildJvm worker = ChildJvm.start(FaultWorker.class, workerSettings)) {
				worker.awaitLine("READY", Duration.ofSeconds(60));
				long end = System.nanoTime() + duration.toNanos();
				worker.send("GO");
				workload.start(THREADS, end, seed);
				FaultSchedule<T> run = new FaultSchedule<>(target, log, end, lease, workload::threads, (signal) -> {
					killed.compareAndSet(false, "KILL".equals(signal));
					FaultRun.signal(worker, signal);
				});
				fault.inject(run);
				Duration grace = lease.multipliedBy(6).plusSeconds(30);
				workload.join(duration.plus(grace));
				Workload.Leaks remote = new Workload.Leaks(0, 0, 0, 0, 0);
				if (!killed.get()) {
					worker.awaitLine("DONE", duration.plus(grace));
					remote = Workload.Leaks.parse(worker.awaitLine("LEAKS", Duration.ofSeconds(1)));
					int exit = worker.awaitExit(Duration.ofSeconds(30));
					if (exit != 0) {
						throw new AssertionError("Worker JVM exited with " + exit + ":\n" + worker.output());
					}
				}
				for (String line : Files.readAllLines(history)) {
					if (line.startsWith("E ")) {
						errors.add("worker JVM: " + line.substring(2));
					}
					else if (!line.isBlank()) {
						ops.add(FamilyOp.parse(line));
					}
				}
				ops.addAll(workload.ops());
				workload.errors().forEach((error, count) -> errors.add(count + " x " + error));
				// Counted before close(), which would release and cancel what leaked.
				Workload.Leaks local = workload.leaks();
				workload.close();
				leaks = local.total() + remote.total();
				leakDetail.append("this JVM ")
					.append(local)
					.append(", worker JVM ")
					.append(killed.get() ? "killed" : remote);
				for (int i = 0; i < fencedKeys.size(); i++) {
					accepted[i] = resource.accepted(fencedKeys.get(i));
					values[i] = resource.value(fencedKeys.get(i));
				}
			}
			finally {
				workload.close();
				resource.close();
			}
			leaks += target.leftInStore(lease, leakDetail);
			FamilyFaultReport report = FamilyFaultReport.check(fault, seed, ops, accepted, values, leaks,
					leakDetail.toString(), errors, log.injectedCount());
			System.out.println("Fault schedule of " + fault.name() + " (family):\n" + log.describe());
			return report;
		}
		finally {
			Files.deleteIfExists(history);
		}
	}

	/**
	 * The worker JVM's part ({@link FaultWorker} with {@link #FAMILY}): the workload,
	 * each event written to the history file as it happens; then {@code LEAKS ...} and
	 * {@code DONE}.
	 */
	static void worker(Map<String, String> settings) throws Exception {
		int threads = (int) WorkerArgs.number(settings, FaultWorker.THREADS);
		Duration duration = Duration.ofMillis(WorkerArgs.number(settings, FaultWorker.MILLIS));
		long seed = WorkerArgs.number(settings, FaultWorker.SEED);
		Duration lease = Duration.ofMillis(WorkerArgs.number(settings, FaultRun.LEASE_MILLIS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		ResourceFactory resources = WorkerArgs.instance(settings, WorkerArgs.RESOURCES, ResourceFactory.class);
		FencedResource resource = resources.fencedResource(settings);
		try (Writer history = Files.newBufferedWriter(Path.of(WorkerArgs.require(settings, FaultWorker.HISTORY)))) {
			FamilyFaultWorkload workload = new FamilyFaultWorkload(1, store, settings, resource, lease, history);
			try {
				FaultWorker.readySteadyGo();
				workload.start(threads, System.nanoTime() + duration.toNanos(), seed);
				workload.join(duration.plus(lease.multipliedBy(4)).plusSeconds(30));
				System.out.println(workload.leaks().line());
				System.out.println("DONE");
			}
			finally {
				System.out.flush();
				workload.close();
				resource.close();
			}
		}
		System.exit(0);
	}

}
