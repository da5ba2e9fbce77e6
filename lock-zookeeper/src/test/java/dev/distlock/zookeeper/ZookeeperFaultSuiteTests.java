package dev.distlock.zookeeper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.harness.fault.FaultReport;
import dev.distlock.harness.fault.FaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite's checkers over the ZooKeeper fault classes: each
 * {@link ZookeeperFaultClass} in turn, with the workload in this JVM and a worker JVM,
 * checked for overlaps, stale writes, wrong fencing, lost updates and leaks. The default
 * build runs the classes {@link #SMOKE} (the server killed, lost replies, a session
 * expired under a paused holder, a partition past the session) for
 * {@code distlock.faults.seconds} (8 s) each; {@code -Psoak} runs every class
 * ({@code distlock.faults.classes=all}) for 130 s each. The table goes to standard output
 * and to {@code target/fault-report.md}; {@code -Ddistlock.faults.seed=N} replays a run
 * and {@code -Ddistlock.faults.classes} (comma-separated) picks classes.
 */
@Tag("server")
class ZookeeperFaultSuiteTests {

	/** The default build's classes. */
	static final List<ZookeeperFaultClass> SMOKE = List.of(ZookeeperFaultClass.SERVER_KILL,
			ZookeeperFaultClass.REPLIES_LOST, ZookeeperFaultClass.HOLDER_SESSION_EXPIRED,
			ZookeeperFaultClass.PARTITION_PAST_SESSION);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 8));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	static List<ZookeeperFaultClass> faultClasses() {
		String only = System.getProperty("distlock.faults.classes", "");
		if (only.isBlank()) {
			return SMOKE;
		}
		if (only.equals("all")) {
			return List.of(ZookeeperFaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(ZookeeperFaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void faultsAreSurvivedOrCaughtByFencing(ZookeeperFaultClass fault) throws Exception {
		FaultReport report = FaultRun.run(fault, DURATION, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		report.assertPassed(fault);
		if (fault != ZookeeperFaultClass.NONE) {
			assertThat(report.faultsInjected()).as("faults injected").isPositive();
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(FaultReport.writeTable(reports,
				"ZooKeeper, " + DURATION.toSeconds() + " s per fault class, base seed " + SEED,
				Path.of("target", "fault-report.md")));
	}

}
