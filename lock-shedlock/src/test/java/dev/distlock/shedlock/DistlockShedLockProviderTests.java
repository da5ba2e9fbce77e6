package dev.distlock.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the bridge adds to ShedLock's semantics, through ShedLock's own
 * {@link LockingTaskExecutor} (what {@code @SchedulerLock} runs): the fencing token and
 * loss detection inside the job, a lost lock reported on unlock, and lock names shared
 * with {@code @DistributedLock} keys.
 */
class DistlockShedLockProviderTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final LockingTaskExecutor executor = new DefaultLockingTaskExecutor(
			new DistlockShedLockProvider(this.store));

	private final RenewalScheduler scheduler = new RenewalScheduler();

	@AfterEach
	void stopScheduler() {
		this.scheduler.close();
	}

	@Test
	void aJobSeesItsLockAsTheCurrentLeaseWithARisingFencingToken() throws Throwable {
		List<Lease> seen = new ArrayList<>();
		List<Long> tokens = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			this.executor.executeWithLock((Runnable) () -> {
				Lease lease = LockContext.current().orElseThrow();
				seen.add(lease);
				tokens.add(lease.fencingToken());
				assertThat(lease.isHeld()).isTrue();
			}, config("nightly", Duration.ofMinutes(1), Duration.ZERO));
		}
		assertThat(seen).extracting(Lease::key).containsOnly("nightly");
		assertThat(tokens).isSorted().doesNotHaveDuplicates();
		assertThat(seen).noneMatch(Lease::isHeld);
		assertThat(LockContext.held()).as("scopes closed by unlock").doesNotContainAnyElementsOf(seen);
	}

	@Test
	void aLockLostWhileTheJobRunsIsReportedOnUnlockAndTheNewOwnersLockIsKept() {
		assertThatExceptionOfType(LeaseLostException.class)
			.isThrownBy(() -> this.executor.executeWithLock((Runnable) () -> {
				Lease lease = LockContext.current().orElseThrow();
				Conditions.await("the job's lease runs out", Duration.ofSeconds(10), () -> !lease.isHeld());
				Conditions.await("another node takes the lock", Duration.ofSeconds(10), () -> LockAttempt
					.join(this.store.tryLock(
							LockRequest.exclusive("report", Duration.ofMinutes(1)))) instanceof LockAttempt.Acquired);
			}, config("report", Duration.ofMillis(200), Duration.ZERO)))
			.withMessageContaining("'report'")
			.withMessageContaining("lockAtMostFor");
		assertThat(InMemoryShedLockSuiteTests.isLocked(this.store, "report")).as("the other node's lock").isTrue();
		assertThat(LockContext.held()).extracting(Lease::key).doesNotContain("report");
	}

	@Test
	void aLockNeverUnlockedLeavesItsThreadsContextOnceNoLongerHeld() {
		DistlockShedLockProvider provider = new DistlockShedLockProvider(this.store);
		provider.lock(config("abandoned", Duration.ofMillis(100), Duration.ZERO)).orElseThrow();
		Lease abandoned = LockContext.current().orElseThrow();
		Conditions.await("the abandoned lock runs out", Duration.ofSeconds(10), () -> !abandoned.isHeld());
		SimpleLock next = provider.lock(config("next", Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
		assertThat(LockContext.held()).doesNotContain(abandoned);
		next.unlock();
	}

	@Test
	void aJobCannotReleaseItsLockItself() throws Throwable {
		this.executor.executeWithLock(
				(Runnable) () -> assertThatExceptionOfType(UnsupportedOperationException.class)
					.isThrownBy(() -> LockContext.current().orElseThrow().release())
					.withMessageContaining("released by ShedLock"),
				config("job", Duration.ofMinutes(1), Duration.ZERO));
	}

	@Test
	void lockNamesAreTheKeysOfDistributedLockByDefault() {
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ZERO)
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(20))
					.build());
		try (Lease lease = template.acquire("report", LockOptions.defaults())) {
			assertThat(new DistlockShedLockProvider(this.store)
				.lock(config("report", Duration.ofMinutes(1), Duration.ZERO)))
				.as("the same key, held by @DistributedLock")
				.isEmpty();
			Optional<SimpleLock> prefixed = new DistlockShedLockProvider(this.store, "shedlock:")
				.lock(config("report", Duration.ofMinutes(1), Duration.ZERO));
			assertThat(prefixed).as("a prefixed name is another key").isPresent();
			prefixed.get().unlock();
		}
	}

	private static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
		return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
	}

}
