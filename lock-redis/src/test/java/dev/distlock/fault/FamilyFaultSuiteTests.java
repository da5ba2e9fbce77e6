package dev.distlock.fault;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.distlock.harness.fault.FamilyFaultReport;
import dev.distlock.harness.fault.FamilyFaultRun;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lock family's fault suite on Redis, across JVMs: each {@link FamilyFaultClass} with
 * the family's workload (read-write lock, semaphore, multi-key locks, latch rounds) in
 * this JVM and a worker JVM, checked over one merged history: never a writer alongside a
 * reader, never more permit holders than permits, never a key of a multi-key lock held
 * twice, a latch never opened early, no lost update, no leak ({@link FamilyFaultReport}).
 *
 * <p>
 * The default build runs a smoke: the classes {@link #SMOKE} (the worker JVM killed;
 * Redis paused, a partition, resets, latency and {@code CLIENT KILL} in one run; the
 * worker JVM paused past its lease and Redis restarted empty in another), 7 s each
 * ({@code distlock.famfaults.seconds}). {@code -Psoak} runs every class
 * ({@code distlock.famfaults.classes=all}) for 60 s each.
 * {@code distlock.famfaults.classes} also takes a comma-separated list of classes, and
 * {@code distlock.famfaults.seed} replays a run. The table goes to
 * {@code target/family-fault-report.md}.
 */
@Tag("server")
class FamilyFaultSuiteTests {

	/** The default build's classes. */
	static final List<FamilyFaultClass> SMOKE = List.of(FamilyFaultClass.HOLDER_KILL, FamilyFaultClass.SMOKE_IN_MODEL,
			FamilyFaultClass.SMOKE_OUTSIDE);

	private static final Duration HUNG_MINIMUM = Duration.ofSeconds(15);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.famfaults.seconds", 7));

	private static final long SEED = Long.getLong("distlock.famfaults.seed", System.currentTimeMillis());

	private static final List<FamilyFaultReport> reports = new ArrayList<>();

	static List<FamilyFaultClass> faultClasses() {
		String only = System.getProperty("distlock.famfaults.classes", "");
		if (only.isBlank()) {
			return SMOKE;
		}
		if (only.equals("all")) {
			return List.of(FamilyFaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(FamilyFaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void familyHoldsUnderTheMutexFaults(FamilyFaultClass fault) throws Exception {
		Duration duration = (fault == FamilyFaultClass.STORE_HUNG && DURATION.compareTo(HUNG_MINIMUM) < 0)
				? HUNG_MINIMUM : DURATION;
		FamilyFaultReport report = FamilyFaultRun.run(fault, duration, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FamilyFaultReport.header() + "\n" + report.row() + "\noutcomes: " + report.outcomes());
		report.assertPassed(fault);
		if (fault != FamilyFaultClass.NONE) {
			assertThat(report.faultsInjected()).as("faults injected by " + fault).isPositive();
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(
				FamilyFaultReport.writeTable(reports, DURATION.toSeconds() + " s per fault class, base seed " + SEED,
						Path.of("target", "family-fault-report.md")));
	}

}
