package dev.distlock.harness.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.FaultLog;
import dev.distlock.harness.ProviderFactory;

/**
 * One fault class run end to end, for any store: its servers
 * ({@link FaultScenario#start()}), the {@link Workload} in this JVM and in a worker JVM
 * ({@link FaultWorker}), the seeded faults ({@link FaultScenario#inject}), then the
 * checks over everything recorded ({@link FaultReport}), with the leaks of both JVMs and
 * of the store ({@link FaultTarget#leftInStore}).
 */
public final class FaultRun {

	/** The workload's lease time. */
	public static final Duration LEASE = Duration.ofMillis(1200);

	/**
	 * The setting, in both JVMs, with the workload's lease in milliseconds: stores whose
	 * client's command timeout is not kept by default set theirs to it, so that a hung
	 * call does not outlive the lock.
	 */
	public static final String LEASE_MILLIS = "fault.lease-millis";

	/**
	 * The setting, in both JVMs, telling the {@link ProviderFactory} whether the client
	 * keeps its default settings ({@link FaultScenario#clientDefaults()}): {@code true}
	 * or {@code false}.
	 */
	public static final String CLIENT_DEFAULTS = "fault.client-defaults";

	/**
	 * The setting, in both JVMs, turning local hand-over on: {@code true} for every
	 * class, as {@link dev.distlock.support.HandoverSettings#DEFAULTS} has it, so that
	 * the checks (as strict as with it off) prove it, in and outside the fault model.
	 */
	public static final String HANDOVER = "fault.handover";

	/**
	 * Worker threads in this JVM ({@code distlock.faults.threads}); one fewer in the
	 * worker JVM.
	 */
	private static final int LOCAL_THREADS = Integer.getInteger("distlock.faults.threads", 4);

	private static final int WORKER_THREADS = LOCAL_THREADS - 1;

	private FaultRun() {
	}

	/**
	 * Runs {@code fault} for {@code duration}, its faults drawn from {@code seed} (a run
	 * is replayed with the same seed, as far as timing allows).
	 */
	public static <T extends FaultTarget> FaultReport run(FaultScenario<T> fault, Duration duration, long seed)
			throws Exception {
		FaultLog log = new FaultLog(seed);
		Path history = Files.createTempFile("distlock-faults-" + fault.name(), ".ops");
		try (T target = fault.start()) {
			Map<String, String> settings = new LinkedHashMap<>(target.settings());
			settings.put(LEASE_MILLIS, Long.toString(LEASE.toMillis()));
			settings.put(CLIENT_DEFAULTS, Boolean.toString(fault.clientDefaults()));
			settings.put(HANDOVER, "true");
			FencedResource resource = target.newResourceFactory().fencedResource(settings);
			ProviderFactory store = target.newProviderFactory();
			Workload workload = new Workload(0, store, settings, resource, LEASE, fault.fair());
			Duration storeTimeout = workload.storeTimeout();
			List<Op> ops = new ArrayList<>();
			List<long[]> hangs = List.of();
			List<String> errors = new ArrayList<>();
			int leaks;
			long handovers;
			StringBuilder leakDetail = new StringBuilder();
			long[] accepted = new long[Workload.KEYS];
			long[] values = new long[Workload.KEYS];
			Map<String, String> workerSettings = new LinkedHashMap<>(target.childSettings());
			workerSettings.putAll(settings);
			workerSettings.put(FaultWorker.THREADS, Integer.toString(WORKER_THREADS));
			workerSettings.put(FaultWorker.MILLIS, Long.toString(duration.toMillis()));
			workerSettings.put(FaultWorker.SEED, Long.toString(seed + 1));
			workerSettings.put(FaultWorker.HISTORY, history.toString());
			workerSettings.put(FaultWorker.KEYS, Integer.toString(Workload.KEYS));
			workerSettings.put(FaultWorker.FAIR, Boolean.toString(fault.fair()));
			try (ChildJvm worker = ChildJvm.start(FaultWorker.class, workerSettings)) {
				worker.awaitLine("READY", Duration.ofSeconds(60));
				long end = System.nanoTime() + duration.toNanos();
				worker.send("GO");
				workload.start(LOCAL_THREADS, end, seed);
				FaultSchedule<T> run = new FaultSchedule<>(target, log, end, LEASE, workload::threads,
						(signal) -> signal(worker, signal));
				fault.inject(run);
				hangs = run.hangs();
				Duration grace = LEASE.multipliedBy(6).plusSeconds(30);
				workload.join(duration.plus(grace));
				worker.awaitLine("DONE", duration.plus(grace));
				String leakLine = worker.awaitLine("LEAKS", Duration.ofSeconds(1));
				Workload.Leaks remote = Workload.Leaks.parse(leakLine);
				long remoteHandovers = Long
					.parseLong(worker.awaitLine("HANDOVERS", Duration.ofSeconds(1)).substring("HANDOVERS ".length()));
				handovers = (workload.localHandovers() < 0) ? -1 : workload.localHandovers() + remoteHandovers;
				worker.output()
					.lines()
					.filter((line) -> line.startsWith("ERROR") || line.startsWith("BACKEND"))
					.forEach(errors::add);
				assertExit(worker);
				ops.addAll(workload.ops());
				Files.readAllLines(history).stream().map(Op::parse).forEach(ops::add);
				workload.errors().forEach((error, count) -> errors.add("ERROR " + count + " " + error));
				workload.backendErrors().forEach((error, count) -> errors.add("BACKEND " + count + " " + error));
				// Counted before close(), which would release and cancel what leaked.
				Workload.Leaks local = workload.leaks();
				workload.close();
				leaks = local.total() + remote.total();
				leakDetail.append("this JVM ").append(local).append(", worker JVM ").append(remote);
				for (int key = 0; key < Workload.KEYS; key++) {
					accepted[key] = resource.accepted(Workload.key(key));
					values[key] = resource.value(Workload.key(key));
				}
			}
			finally {
				workload.close();
				resource.close();
			}
			leaks += target.leftInStore(LEASE, leakDetail);
			FaultReport report = FaultReport
				.check(fault, LEASE, storeTimeout, seed, duration.toSeconds(), ops, accepted, values, leaks,
						leakDetail.toString(), log.healTimes(), log.injectedCount(), errors, hangs)
				.withLocalHandovers(handovers);
			System.out.println("Fault schedule of " + fault.name() + ":\n" + log.describe());
			return report;
		}
		finally {
			Files.deleteIfExists(history);
		}
	}

	/**
	 * Sends {@code signal} to the worker JVM: {@code KILL} kills it ({@code kill -9}) and
	 * waits until it is gone, any other signal ({@code STOP}, {@code CONT}) is sent with
	 * {@code kill}.
	 */
	static void signal(ChildJvm worker, String signal) {
		try {
			if ("KILL".equals(signal)) {
				worker.kill();
			}
			else {
				worker.signal(signal);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void assertExit(ChildJvm worker) throws InterruptedException {
		int exit = worker.awaitExit(Duration.ofSeconds(30));
		if (exit != 0) {
			throw new AssertionError("Worker JVM exited with " + exit + ":\n" + worker.output());
		}
	}

}
