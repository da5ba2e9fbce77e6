package dev.distlock.jdbc;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.harness.fault.FamilyFaultReport;
import dev.distlock.harness.fault.FamilyFaultRun;
import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock family's fault suite on PostgreSQL and MariaDB, across JVMs: each
 * {@link JdbcFamilyFaultClass} with the family's workload (read-write lock, semaphore,
 * multi-key locks, latch rounds) in this JVM and a worker JVM, on a server of its own,
 * checked over one merged history by the Redis family suite's checkers
 * ({@link FamilyFaultReport}): never a writer alongside a reader, never more permit
 * holders than permits, never a key of a multi-key lock held twice, a latch never opened
 * early, no lost update, nothing left held in either JVM or in the tables.
 *
 * <p>
 * The default build runs lost replies on each database, 7 s each
 * ({@code distlock.famfaults.seconds}); a paused and a killed holder of each member have
 * their own tests ({@link AbstractJdbcFamilyHolderTests}). {@code -Psoak}
 * ({@code distlock.famfaults.classes=all}) runs every class for 60 s; the setting also
 * takes a comma-separated list, and {@code distlock.famfaults.seed} replays a run. The
 * table goes to {@code target/jdbc-family-fault-report.md}.
 */
@Tag("server")
class JdbcFamilyFaultSuiteTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.famfaults.seconds", 7));

	private static final long SEED = Long.getLong("distlock.famfaults.seed", System.currentTimeMillis());

	private static final List<FamilyFaultReport> reports = new ArrayList<>();

	static List<Scenario> scenarios() {
		String only = System.getProperty("distlock.famfaults.classes", "");
		List<JdbcFamilyFaultClass> classes = only.isBlank() ? List.of(JdbcFamilyFaultClass.REPLIES_LOST)
				: only.equals("all") ? List.of(JdbcFamilyFaultClass.values())
						: Arrays.stream(only.split(",")).map(String::trim).map(JdbcFamilyFaultClass::valueOf).toList();
		List<Scenario> scenarios = new ArrayList<>();
		for (String database : List.of("postgresql", "mariadb")) {
			classes.forEach((fault) -> scenarios.add(new Scenario(fault, database)));
		}
		return scenarios;
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("scenarios")
	void familyHoldsUnderFaults(Scenario scenario) throws Exception {
		long seed = SEED + scenario.fault().ordinal() * 1_000_003L + scenario.database().length();
		FamilyFaultReport report = FamilyFaultRun.run(scenario, DURATION, seed);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FamilyFaultReport.header() + "\n" + report.row() + "\noutcomes: " + report.outcomes());
		report.assertPassed(scenario);
		assertThat(report.faultsInjected()).as("faults injected by " + scenario).isPositive();
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(
				FamilyFaultReport.writeTable(reports, DURATION.toSeconds() + " s per fault class, base seed " + SEED,
						Path.of("target", "jdbc-family-fault-report.md")));
	}

	/**
	 * One class on one database, a server of its own per run.
	 *
	 * @param fault the fault class
	 * @param database {@code postgresql} or {@code mariadb}
	 */
	record Scenario(JdbcFamilyFaultClass fault, String database) implements FaultScenario<JdbcFaultTarget> {

		@Override
		public String name() {
			return this.database + "-" + this.fault.name();
		}

		@Override
		public boolean inModel() {
			return this.fault.inModel();
		}

		@Override
		public JdbcFaultTarget start() {
			return new JdbcFaultTarget(
					this.database.equals("mariadb") ? MariaDbServer.start() : PostgresServer.start());
		}

		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			this.fault.inject(run);
		}

		@Override
		public String toString() {
			return this.database + " " + this.fault;
		}

	}

}
