package dev.distlock.test;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.LockObserver.AcquireOutcome;
import dev.distlock.support.LockObserver.HoldOutcome;
import dev.distlock.support.LockObserver.LossReason;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the machinery tells a {@link LockObserver}, seen through {@link LockRecorder} on
 * the in-memory store: every acquisition's outcome, every hold's end, every loss with its
 * reason; re-entries are not acquisitions; an observer that throws does not break a lock.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LockRecorderTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final LockRecorder recorder = new LockRecorder();

	private final DefaultLockTemplate template = template(this.recorder);

	private final DefaultLockTemplate other = template(LockObserver.NONE);

	private DefaultLockTemplate template(LockObserver observer) {
		return new DefaultLockTemplate(this.store, this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build(),
				LeaseLossListener.NONE, false, observer);
	}

	@AfterEach
	void close() {
		this.template.close();
		this.other.close();
		this.scheduler.close();
	}

	private static String key() {
		return "recorded-" + UUID.randomUUID();
	}

	private static LockOptions noWait() {
		return LockOptions.builder().waitTime(Duration.ZERO).build();
	}

	@Test
	void aMultiKeyLockIsOneAcquisitionPerKeyTakenAndReentriesAreNone() {
		this.template.run("a", () -> this.template.runAll(List.of("c", "a", "b"), LockOptions.defaults(), () -> {
		}));
		assertThat(this.recorder.acquiredKeys()).containsExactly("a", "b", "c");
		assertThat(this.recorder.acquisitions())
			.allSatisfy((acquisition) -> assertThat(acquisition.holdOutcome()).isEqualTo(HoldOutcome.RELEASED));
		try (Lease blocker = this.other.acquire("d", LockOptions.defaults())) {
			assertThat(this.template.tryAcquireAll(List.of("d", "e"),
					LockOptions.builder().waitTime(Duration.ZERO).build()))
				.isEmpty();
		}
		assertThat(this.recorder.acquisitions()).filteredOn((acquisition) -> acquisition.key().equals("e"))
			.singleElement()
			.extracting(LockRecorder.Acquisition::outcome)
			.isEqualTo(AcquireOutcome.SKIPPED);
	}

	@Test
	void anAcquisitionAndItsReleaseAreRecordedWithKeyNameAndToken() {
		String key = key();
		this.template.run(key, LockOptions.builder().name("stock").build(), () -> {
			LockAssert.assertLocked(key);
			this.template.run(key, () -> LockAssert.assertLocked(key));
		});
		LockRecorder.Acquisition acquisition = this.recorder.assertAcquired(key);
		assertThat(acquisition.name()).isEqualTo("stock");
		assertThat(acquisition.fencingToken()).isPositive();
		assertThat(acquisition.holdOutcome()).isEqualTo(HoldOutcome.RELEASED);
		this.recorder.assertAcquiredExactly(key);
		this.recorder.assertAllReleased();
	}

	@Test
	void aBusyLockIsSkippedForTryAcquireAndTimesOutForAcquire() {
		String key = key();
		Lease held = this.other.acquire(key, noWait());
		try {
			assertThat(this.template.tryAcquire(key, noWait())).isEmpty();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.template.acquire(key, noWait()));
		}
		finally {
			held.release();
		}
		assertThat(this.recorder.acquisitions()).extracting(LockRecorder.Acquisition::outcome)
			.containsExactly(AcquireOutcome.SKIPPED, AcquireOutcome.TIMEOUT);
		this.recorder.assertNoneAcquired();
	}

	@Test
	void anInterruptedWaitIsRecordedAsInterrupted() {
		String key = key();
		Lease held = this.other.acquire(key, noWait());
		try {
			Thread.currentThread().interrupt();
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.template.acquire(key, LockOptions.defaults()));
		}
		finally {
			Thread.interrupted();
			held.release();
		}
		assertThat(this.recorder.acquisitions()).extracting(LockRecorder.Acquisition::outcome)
			.containsExactly(AcquireOutcome.INTERRUPTED);
	}

	@Test
	void aLeaseThatRunsOutIsRecordedAsLostAndItsHoldEndsLeaseLost() {
		String key = key();
		Lease lease = this.template.acquire(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(50)).autoRenew(false).name("short").build());
		Conditions.await("the lease is lost", Duration.ofSeconds(10), () -> !this.recorder.losses().isEmpty());
		assertThat(this.recorder.losses()).containsExactly(new LockRecorder.Loss(key, "short", LossReason.EXPIRED));
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
		lease.release();
		assertThat(this.recorder.assertAcquired(key).holdOutcome()).isEqualTo(HoldOutcome.LEASE_LOST);
	}

	@Test
	void anObserverThatThrowsDoesNotBreakTheLock() {
		LockObserver failing = new LockObserver() {
			@Override
			public Acquisition acquiring(String key, String name, boolean fair) {
				throw new IllegalStateException("observer failure");
			}
		};
		DefaultLockTemplate observed = template(LockObserver.composite(List.of(failing, this.recorder)));
		try {
			String key = key();
			assertThat(observed.execute(key, () -> LockContext.current().isPresent())).isTrue();
			this.recorder.assertAcquired(key);
			this.recorder.assertAllReleased();
		}
		finally {
			observed.close();
		}
	}

	@Test
	void assertionsFailNamingWhatWasLocked() {
		String key = key();
		this.template.run(key, () -> {
		});
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.recorder.assertAcquired("other"))
			.withMessageContaining(key);
		assertThatExceptionOfType(AssertionError.class).isThrownBy(this.recorder::assertNoneAcquired)
			.withMessageContaining(key);
		assertThatExceptionOfType(AssertionError.class).isThrownBy(LockAssert::assertLocked)
			.withMessageContaining("holds none");
		this.template.run(key,
				() -> assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> LockAssert.assertLocked("other"))
					.withMessageContaining(key));
		LockAssert.assertNotLocked();
	}

}
