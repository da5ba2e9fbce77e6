package dev.distlock.zookeeper;

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
 * The lock family's fault suite on ZooKeeper, across JVMs: each
 * {@link ZookeeperFamilyFaultClass} with the family's workload (read-write lock,
 * semaphore, multi-key locks, latch rounds) in this JVM and a worker JVM, checked over
 * one merged history by the checkers of every store ({@link FamilyFaultReport}): never a
 * writer alongside a reader, never more permit holders than permits, never a key of a
 * multi-key lock held twice, a latch never opened early, no lost update, no leak (no node
 * left owned by a client's session once its holders and waiters are done, none left in
 * the store once every JVM is).
 *
 * <p>
 * The default build runs a smoke: the classes {@link #SMOKE} (the worker JVM killed, the
 * worker JVM paused past its session, replies lost), 10 s each (a ZooKeeper call costs a
 * write to the server's log, so a run needs longer than Redis's 7 s for permit holders
 * and latch rounds of both JVMs to meet) ({@code distlock.famfaults.seconds}).
 * {@code -Psoak} runs every class ({@code distlock.famfaults.classes=all}) for 60 s each.
 * {@code distlock.famfaults.classes} also takes a comma-separated list of classes, and
 * {@code distlock.famfaults.seed} replays a run. The table goes to
 * {@code target/family-fault-report.md}.
 */
@Tag("server")
class ZookeeperFamilyFaultSuiteTests {

	/** The default build's classes. */
	static final List<ZookeeperFamilyFaultClass> SMOKE = List.of(ZookeeperFamilyFaultClass.HOLDER_KILL,
			ZookeeperFamilyFaultClass.HOLDER_SESSION_EXPIRED, ZookeeperFamilyFaultClass.REPLIES_LOST);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.famfaults.seconds", 10));

	private static final long SEED = Long.getLong("distlock.famfaults.seed", System.currentTimeMillis());

	private static final List<FamilyFaultReport> reports = new ArrayList<>();

	static List<ZookeeperFamilyFaultClass> faultClasses() {
		String only = System.getProperty("distlock.famfaults.classes", "");
		if (only.isBlank()) {
			return SMOKE;
		}
		if (only.equals("all")) {
			return List.of(ZookeeperFamilyFaultClass.values());
		}
		return Arrays.stream(only.split(",")).map(String::trim).map(ZookeeperFamilyFaultClass::valueOf).toList();
	}

	@ParameterizedTest
	@MethodSource("faultClasses")
	void familyHoldsUnderTheFaults(ZookeeperFamilyFaultClass fault) throws Exception {
		FamilyFaultReport report = FamilyFaultRun.run(fault, DURATION, SEED + fault.ordinal() * 1_000_003L);
		synchronized (reports) {
			reports.add(report);
		}
		System.out.println(FamilyFaultReport.header() + "\n" + report.row() + "\noutcomes: " + report.outcomes());
		report.assertPassed(fault);
		if (fault != ZookeeperFamilyFaultClass.NONE) {
			assertThat(report.faultsInjected()).as("faults injected by " + fault).isPositive();
		}
	}

	@AfterAll
	static void writeTable() throws IOException {
		System.out.println(FamilyFaultReport.writeTable(reports,
				"ZooKeeper, " + DURATION.toSeconds() + " s per fault class, base seed " + SEED,
				Path.of("target", "family-fault-report.md")));
	}

}
