package dev.distlock.zookeeper;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.testsupport.fault.FaultReport;
import dev.distlock.testsupport.fault.FaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The fault suite's checkers over the ZooKeeper fault classes: every
 * {@link ZookeeperFaultClass} in turn, with the workload in this JVM and a worker JVM,
 * checked for overlaps, stale writes, lost updates and leaks. The default build runs each
 * class for {@code distlock.faults.seconds} (10 by default); {@code -Psoak} runs each for
 * minutes. The table goes to standard output and to {@code target/fault-report.md};
 * {@code -Ddistlock.faults.seed=N} replays a run.
 */
class ZookeeperFaultSuiteTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 10));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	@ParameterizedTest
	@EnumSource(ZookeeperFaultClass.class)
	void faultsAreSurvivedOrCaughtByFencing(ZookeeperFaultClass fault) throws Exception {
		FaultReport report = FaultRun.run(fault, DURATION, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		report.assertPassed(fault);
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(FaultReport.writeTable(reports,
				DURATION.toSeconds() + " s per fault class, base seed " + SEED, Path.of("target", "fault-report.md")));
	}

}
