package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A handle that reports its own loss ({@link dev.distlock.spi.LossReporting}), on the
 * in-memory store: the loss counts at once, long before the next renewal (a third of a 30
 * s lease) or the deadline could find it.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LossReportingTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final ReportingProvider provider = new ReportingProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final List<String> losses = new CopyOnWriteArrayList<>();

	private final DefaultLockTemplate template = new DefaultLockTemplate(this.provider, this.scheduler,
			LockOptions.builder()
				.waitTime(Duration.ZERO)
				.leaseTime(LEASE)
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(50))
				.onLeaseLost(OnLeaseLost.FAIL_ON_EXIT)
				.fair(false)
				.build(),
			(lease, reason, holder) -> this.losses
				.add(lease.key() + " held by " + ((holder != null) ? holder.getName() : "none") + ": " + reason),
			false);

	@AfterEach
	void close() {
		this.template.close();
		this.scheduler.close();
		this.provider.close();
	}

	private static String key() {
		return "reported-" + UUID.randomUUID();
	}

	@Test
	void aReportedLossInterruptsTheHolderTellsTheListenerAndMakesTheReleaseThrow() throws Exception {
		String key = key();
		CountDownLatch inScope = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		AtomicBoolean heldAfterInterrupt = new AtomicBoolean(true);
		Waiter<Boolean> holder = Waiter.start("session-holder", () -> this.template.execute(key,
				LockOptions.builder().leaseTime(LEASE).onLeaseLost(OnLeaseLost.INTERRUPT).build(), () -> {
					inScope.countDown();
					try {
						Thread.sleep(30_000);
					}
					catch (InterruptedException ex) {
						interrupted.set(true);
						heldAfterInterrupt.set(dev.distlock.LockContext.current().orElseThrow().isHeld());
					}
					return interrupted.get();
				}));
		assertThat(inScope.await(10, TimeUnit.SECONDS)).isTrue();
		this.provider.reportLoss(this.provider.handles.get(0), "session expired");
		assertThat(holder.result).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LeaseLostException.class)
			.withMessageContaining("the store reported it lost: session expired");
		assertThat(interrupted).as("the scope thread was interrupted").isTrue();
		assertThat(heldAfterInterrupt).as("isHeld() once interrupted").isFalse();
		Await.until("the loss listener told", Duration.ofSeconds(5), () -> !this.losses.isEmpty());
		assertThat(this.losses).hasSize(1)
			.first()
			.asString()
			.startsWith(key + " held by session-holder")
			.contains("session expired");
		assertThat(this.template.tryAcquire(key, LockOptions.defaults())).as("the lock after the loss")
			.hasValueSatisfying(Lease::release);
	}

	@Test
	void aLossReportedBeforeTheListenerWasRegisteredCountsRightAfter() {
		this.provider.lostOnAcquire = "session expired during the acquire";
		Lease lease = this.template.acquire(key(), LockOptions.defaults());
		Await.until("the lease is lost", Duration.ofSeconds(5), () -> !lease.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release)
			.withMessageContaining("session expired during the acquire");
		// The lease turns lost first; the listener hears of it right after.
		Await.until("the loss listener told", Duration.ofSeconds(5), () -> !this.losses.isEmpty());
		assertThat(this.losses).hasSize(1);
	}

	@Test
	void aLeaseListensOnceAndALossReportedAfterItsReleaseIsNoLoss() {
		String key = key();
		Lease lease = this.template.acquire(key, LockOptions.defaults());
		ReportingProvider.Reporting handle = this.provider.handles.get(0);
		assertThat(handle.registrations).hasValue(1);
		lease.release();
		this.provider.reportLoss(handle, "too late");
		Lease next = this.template.acquire(key, LockOptions.defaults());
		assertThat(next.isHeld()).isTrue();
		next.release();
		assertThat(this.losses).isEmpty();
	}

}
