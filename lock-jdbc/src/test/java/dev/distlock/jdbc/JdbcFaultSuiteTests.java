package dev.distlock.jdbc;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.testsupport.fault.FaultReport;
import dev.distlock.testsupport.fault.FaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite on PostgreSQL: every {@link JdbcFaultClass} in turn, with the workload
 * in this JVM and a worker JVM, and the checks of the Redis suite (overlaps, stale
 * writes, wrong fencing, lost updates, leaks). Each class runs
 * {@code distlock.faults.seconds} (8 s by default, so the suite takes about a minute;
 * {@code -Psoak} sets 130). The table goes to standard output and
 * {@code target/jdbc-fault-report.md}; {@code -Ddistlock.faults.seed=N} replays a run.
 */
class JdbcFaultSuiteTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 8));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	/**
	 * Every class, or those named in {@code distlock.faults.classes} (comma-separated),
	 * to look at one.
	 */
	static List<JdbcFaultClass> faultClasses() {
		String only = System.getProperty("distlock.faults.classes", "");
		if (only.isBlank()) {
			return List.of(JdbcFaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(JdbcFaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void faultsAreSurvivedOrCaughtByFencing(JdbcFaultClass fault) throws Exception {
		FaultReport report = FaultRun.run(fault, DURATION, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		report.assertPassed(fault);
		if (fault != JdbcFaultClass.NONE) {
			assertThat(report.faultsInjected()).as("faults injected").isPositive();
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(FaultReport.writeTable(reports,
				"PostgreSQL, " + DURATION.toSeconds() + " s per fault class, base seed " + SEED,
				Path.of("target", "jdbc-fault-report.md")));
	}

}
