package dev.distlock.fault;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.testsupport.fault.FaultReport;
import dev.distlock.testsupport.fault.FaultRun;
import dev.distlock.testsupport.fault.Op;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault-injection suite: every {@link FaultClass} in turn, with the workload in this
 * JVM and a worker JVM, checked for overlaps, stale writes, lost updates and leaks. The
 * default build runs each class briefly ({@code distlock.faults.seconds}, 10 by default;
 * at least 15 for the hung store, whose Redis stops for 6 to 8 s), the fair variants of a
 * few classes for three quarters of that, to keep the build short; {@code -Psoak} runs
 * each for minutes. The table goes to standard output and to
 * {@code target/fault-report.md}; {@code -Ddistlock.faults.seed=N} replays a run.
 */
class FaultSuiteTests {

	private static final Duration HUNG_MINIMUM = Duration.ofSeconds(15);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 10));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	/**
	 * Every class, or those named in {@code distlock.faults.classes} (comma-separated),
	 * to look at one.
	 */
	static List<FaultClass> faultClasses() {
		String only = System.getProperty("distlock.faults.classes", "");
		if (only.isBlank()) {
			return List.of(FaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(FaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void faultsAreSurvivedOrCaughtByFencing(FaultClass fault) throws Exception {
		Duration duration = fault.fair() ? DURATION.multipliedBy(3).dividedBy(4) : DURATION;
		if (fault == FaultClass.STORE_HUNG && duration.compareTo(HUNG_MINIMUM) < 0) {
			// Room for at least one stop longer than the store timeout plus slack.
			duration = HUNG_MINIMUM;
		}
		FaultReport report = FaultRun.run(fault, duration, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		String why = report.row() + "\nleaks: " + report.leakDetail() + "\nerrors: " + report.errors()
				+ "\nstale holders not told: " + report.unsignalled() + "\ncalls over their bound: "
				+ report.boundViolations();
		assertThat(report.count(Op.Outcome.OK)).as(why).isPositive();
		assertThat(report.count(Op.Outcome.ERROR)).as(why).isZero();
		assertThat(report.staleWritesAccepted()).as(why).isZero();
		assertThat(report.wronglyFenced()).as(why).isZero();
		assertThat(report.lostUpdates()).as(why).isZero();
		assertThat(report.leaks()).as(why).isZero();
		if (fault.clientDefaults()) {
			assertThat(report.callsOverBound()).as(why).isZero();
			assertThat(report.busyWhileHung()).as(why).isZero();
		}
		if (!fault.storeFails()) {
			assertThat(report.count(Op.Outcome.BACKEND)).as(why).isZero();
		}
		if (fault.inModel()) {
			assertThat(report.overlaps()).as(why).isZero();
			assertThat(report.crowdedEntries()).as(why).isZero();
		}
		else {
			assertThat(report.staleHoldersSignalled()).as(why).isEqualTo(report.staleHolders());
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		StringBuilder table = new StringBuilder(FaultReport.header()).append('\n');
		long operations = 0;
		for (FaultReport report : reports) {
			table.append(report.row()).append('\n');
			operations += report.operations();
		}
		table.append("\n")
			.append(operations)
			.append(" lock operations, ")
			.append(DURATION.toSeconds())
			.append(" s per fault class (three quarters of it per fair variant), base seed ")
			.append(SEED)
			.append('\n');
		System.out.println(table);
		Path out = Path.of("target", "fault-report.md");
		Files.createDirectories(out.getParent());
		Files.writeString(out, table);
	}

}
