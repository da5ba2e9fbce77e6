package dev.distlock.jdbc;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.harness.fault.FaultReport;
import dev.distlock.harness.fault.FaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault suite on PostgreSQL and on MariaDB: each {@link JdbcFaultClass} in turn on a
 * server of its own, with the workload in this JVM and a worker JVM, and the checks of
 * the Redis suite (overlaps, stale writes, wrong fencing, lost updates, leaks). The
 * default build runs the classes {@link #SMOKE} (the server killed, lost replies, a
 * partition, a holder paused past its lease) for {@code distlock.faults.seconds} (8 s)
 * each; {@code -Psoak} runs every class with the fault-free baseline
 * ({@code distlock.faults.classes=all}) for 130 s each. A table per database goes to
 * standard output and {@code target/jdbc-fault-report-<database>.md};
 * {@code -Ddistlock.faults.classes=A,B} and {@code -Ddistlock.faults.databases=mariadb}
 * choose what runs, {@code -Ddistlock.faults.seed=N} replays a run.
 */
@Tag("server")
class JdbcFaultSuiteTests {

	/** The default build's classes. */
	static final List<JdbcFaultClass> SMOKE = List.of(JdbcFaultClass.SERVER_KILL, JdbcFaultClass.REPLIES_LOST,
			JdbcFaultClass.PARTITION, JdbcFaultClass.HOLDER_STOP_LONG);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 8));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final Map<String, List<FaultReport>> reports = new LinkedHashMap<>();

	/**
	 * The smoke, every class ({@code distlock.faults.classes=all}) or those named, on
	 * every database or those named in {@code distlock.faults.databases}
	 * (comma-separated).
	 */
	static List<JdbcFaultScenario> scenarios() {
		String only = System.getProperty("distlock.faults.classes", "");
		List<JdbcFaultClass> classes = only.isBlank() ? SMOKE : only.equals("all") ? List.of(JdbcFaultClass.values())
				: Arrays.stream(only.split(",")).map(String::trim).map(JdbcFaultClass::valueOf).toList();
		List<JdbcFaultScenario> scenarios = new ArrayList<>();
		for (String database : System.getProperty("distlock.faults.databases", "postgresql,mariadb").split(",")) {
			for (JdbcFaultClass fault : classes) {
				scenarios.add(new JdbcFaultScenario(fault, database.trim()));
			}
		}
		return scenarios;
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("scenarios")
	void faultsAreSurvivedOrCaughtByFencing(JdbcFaultScenario scenario) throws Exception {
		long seed = SEED + scenario.fault().ordinal() * 1_000_003L + scenario.database().length();
		FaultReport report = FaultRun.run(scenario, DURATION, seed);
		synchronized (reports) {
			reports.computeIfAbsent(scenario.database(), (database) -> new ArrayList<>()).add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		report.assertPassed(scenario);
		if (scenario.fault() != JdbcFaultClass.NONE) {
			assertThat(report.faultsInjected()).as("faults injected").isPositive();
		}
	}

	@AfterAll
	static void writeTables() throws IOException {
		for (Map.Entry<String, List<FaultReport>> database : reports.entrySet()) {
			System.out.println(FaultReport.writeTable(database.getValue(),
					database.getKey() + ", " + DURATION.toSeconds() + " s per fault class, base seed " + SEED,
					Path.of("target", "jdbc-fault-report-" + database.getKey() + ".md")));
		}
	}

}
