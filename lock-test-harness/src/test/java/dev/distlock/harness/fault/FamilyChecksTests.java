package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.List;

import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The family checkers find what they look for and excuse a hold whose loss was told; and
 * a short run on the in-memory store passes them.
 */
class FamilyChecksTests {

	private static FamilyHold hold(FamilyHold.Kind kind, long from, long to, boolean lost) {
		return new FamilyHold(0, kind, from, from, to, lost);
	}

	@Test
	void aWriterAlongsideAReaderIsAViolationUnlessItsLossWasTold() {
		FamilyHold reader = hold(FamilyHold.Kind.READ, 0, 10, false);
		assertThat(FamilyChecks.writerAlongsideOthers(List.of(reader, hold(FamilyHold.Kind.WRITE, 5, 15, false))))
			.hasSize(1);
		assertThat(FamilyChecks.writerAlongsideOthers(List.of(reader, hold(FamilyHold.Kind.WRITE, 5, 15, true))))
			.isEmpty();
		assertThat(FamilyChecks.writerAlongsideOthers(List.of(reader, hold(FamilyHold.Kind.READ, 5, 15, false))))
			.as("readers together")
			.isEmpty();
		assertThat(FamilyChecks.writerAlongsideOthers(List.of(reader, hold(FamilyHold.Kind.WRITE, 10, 15, false))))
			.as("a hand-over")
			.isEmpty();
	}

	@Test
	void morePermitHoldersThanPermitsIsAViolation() {
		List<FamilyHold> holds = List.of(hold(FamilyHold.Kind.PERMIT, 0, 10, false),
				hold(FamilyHold.Kind.PERMIT, 2, 12, false), hold(FamilyHold.Kind.PERMIT, 4, 14, false));
		assertThat(FamilyChecks.moreThanPermits(holds, 3)).containsExactly("max 3");
		assertThat(FamilyChecks.moreThanPermits(holds, 2)).hasSize(2);
	}

	@Test
	void aShortRunOnTheInMemoryStorePassesBothChecks() throws Exception {
		InMemoryLockProvider store = new InMemoryLockProvider();
		try (RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate first = template(store, scheduler);
				DefaultLockTemplate second = template(store, scheduler)) {
			FamilyWorkload rw = new FamilyWorkload("rw", 0, Duration.ofSeconds(1));
			FamilyWorkload sem = new FamilyWorkload("sem", 2, Duration.ofSeconds(1));
			long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
			rw.start(List.of(first, second), 3, end, 1);
			sem.start(List.of(first, second), 3, end, 2);
			rw.join(Duration.ofSeconds(30));
			sem.join(Duration.ofSeconds(30));
			assertThat(FamilyChecks.writerAlongsideOthers(rw.holds())).isEmpty();
			List<String> permits = FamilyChecks.moreThanPermits(sem.holds(), 2);
			assertThat(permits).hasSize(1);
			assertThat(FamilyChecks.maxInside(permits)).as("the run reached the limit").isEqualTo(2);
			assertThat(rw.holds()).extracting(FamilyHold::kind).contains(FamilyHold.Kind.READ, FamilyHold.Kind.WRITE);
		}
	}

	private static DefaultLockTemplate template(InMemoryLockProvider store, RenewalScheduler scheduler) {
		return new DefaultLockTemplate(store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(2))
					.leaseTime(Duration.ofSeconds(1))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build());
	}

}
