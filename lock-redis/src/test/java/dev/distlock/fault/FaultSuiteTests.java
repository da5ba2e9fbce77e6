package dev.distlock.fault;

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
 * The fault-injection suite: every {@link FaultClass} in turn, with the workload in this
 * JVM and a worker JVM, checked for overlaps, stale writes, lost updates and leaks. The
 * default build runs each class briefly ({@code distlock.faults.seconds}, 7 by default,
 * room for the longest first pause of any class plus the three leases a fault needs
 * before the end; at least 15 for the hung store, whose Redis stops for 6 to 8 s), to
 * keep the build short, and only the classes {@link #SMOKE} (a restart that loses every
 * lock, a holder paused past its lease, a partition, lost replies, interrupts and a fair
 * queue's reset connection); every class but the baselines must have injected a fault.
 * {@code -Psoak} runs every class ({@code distlock.faults.classes=all}) for minutes each.
 * The table goes to standard output and to {@code target/fault-report.md};
 * {@code -Ddistlock.faults.seed=N} replays a run.
 */
@Tag("server")
class FaultSuiteTests {

	/** The default build's classes. */
	static final List<FaultClass> SMOKE = List.of(FaultClass.REDIS_KILL_NO_PERSISTENCE, FaultClass.HOLDER_STOP,
			FaultClass.PROXY_PARTITION, FaultClass.PROXY_LOST_REPLY, FaultClass.INTERRUPTS,
			FaultClass.FAIR_PROXY_RESET);

	private static final Duration HUNG_MINIMUM = Duration.ofSeconds(15);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 7));

	private static final long SEED = Long.getLong("distlock.faults.seed", System.currentTimeMillis());

	private static final List<FaultReport> reports = new ArrayList<>();

	/**
	 * The smoke, every class ({@code distlock.faults.classes=all}), or those named
	 * (comma-separated), to look at one.
	 */
	static List<FaultClass> faultClasses() {
		String only = System.getProperty("distlock.faults.classes", "");
		if (only.isBlank()) {
			return SMOKE;
		}
		if (only.equals("all")) {
			return List.of(FaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(FaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void faultsAreSurvivedOrCaughtByFencing(FaultClass fault) throws Exception {
		Duration duration = DURATION;
		if (fault == FaultClass.STORE_HUNG && duration.compareTo(HUNG_MINIMUM) < 0) {
			// Room for at least one stop longer than the store timeout plus slack.
			duration = HUNG_MINIMUM;
		}
		FaultReport report = FaultRun.run(fault, duration, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FaultReport.header() + "\n" + report.row() + "\nerrors: " + report.errors());
		report.assertPassed(fault);
		if (fault != FaultClass.NONE && fault != FaultClass.FAIR_NONE) {
			// A short run that never injected its fault proves nothing about it.
			assertThat(report.faultsInjected()).as("faults injected by " + fault).isPositive();
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		String table = FaultReport.writeTable(reports, DURATION.toSeconds() + " s per fault class, base seed " + SEED,
				Path.of("target", "fault-report.md"));
		System.out.println(table);
	}

}
