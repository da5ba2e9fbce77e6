package dev.distlock.harness.family;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.inmemory.InMemoryLockProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The family's fault checks on the in-memory store: with no fault, and with leases taken
 * away under the holders (the store expires random keys, as a lost lease would), which a
 * multi-key holder must be told of, never silently overlapped.
 */
@Tag("slow")
class InMemoryFamilyFaultTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.family.faults.seconds", 2));

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@Test
	void multiKeyLocksAreNeverHeldInPartWithoutFaults() throws Exception {
		MultiLockFaultCheck check = new MultiLockFaultCheck(List.of(this.store, this.store), Duration.ofSeconds(2));
		try {
			MultiLockFaultCheck.Report report = check.run(FamilyFault.NONE, 3, DURATION, 1);
			report.assertPassed();
			assertThat(report.overlaps()).isZero();
		}
		finally {
			check.close();
		}
	}

	@Test
	void multiKeyLocksAreNeverHeldInPartWhileLeasesAreTakenAway() throws Exception {
		MultiLockFaultCheck check = new MultiLockFaultCheck(List.of(this.store, this.store), Duration.ofSeconds(2));
		AtomicBoolean expiring = new AtomicBoolean();
		Thread expirer = new Thread(() -> {
			while (!Thread.currentThread().isInterrupted()) {
				if (expiring.get()) {
					for (String key : check.keys()) {
						if (ThreadLocalRandom.current().nextInt(4) == 0) {
							this.store.expire(key);
						}
					}
				}
				LockSupport.parkNanos(3_000_000);
			}
		});
		expirer.start();
		try {
			MultiLockFaultCheck.Report report = check.run(
					FamilyFault.of("leases taken away", () -> expiring.set(true), () -> expiring.set(false)), 3,
					DURATION, 2);
			report.assertPassed();
			assertThat(report.outcomes()).containsKey("lost, told");
		}
		finally {
			expirer.interrupt();
			expirer.join();
			check.close();
		}
	}

	@Test
	void latchesNeverOpenEarly() throws Exception {
		LatchFaultCheck check = new LatchFaultCheck(List.of(this.store, this.store));
		try {
			check.run(FamilyFault.NONE, DURATION).assertPassed();
		}
		finally {
			check.close();
		}
	}

}
