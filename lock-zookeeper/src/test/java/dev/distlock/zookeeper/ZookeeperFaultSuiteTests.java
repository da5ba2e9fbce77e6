package dev.distlock.zookeeper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.testsupport.fault.FaultReport;
import dev.distlock.testsupport.fault.FaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite's checkers over the ZooKeeper fault classes: every
 * {@link ZookeeperFaultClass} in turn, with the workload in this JVM and a worker JVM,
 * checked for overlaps, stale writes, wrong fencing, lost updates and leaks. Each class
 * runs {@code distlock.faults.seconds} (8 s by default; {@code -Psoak} sets 130). The
 * table goes to standard output and to {@code target/fault-report.md};
 * {@code -Ddistlock.faults.seed=N} replays a run and {@code -Ddistlock.faults.classes}
 * (comma-separated) picks classes.
 */
@Tag("server")
class ZookeeperFaultSuiteTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 8));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	static List<ZookeeperFaultClass> faultClasses() {
		String only = System.getProperty("distlock.faults.classes", "");
		if (only.isBlank()) {
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
