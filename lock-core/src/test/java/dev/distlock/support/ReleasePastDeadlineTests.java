package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A holder that releases after its lease deadline passed, before the deadline watch has
 * marked the lease lost (a JVM stopped past the deadline resumes its holder and the watch
 * together), and whose release then fails, is told that the lease was lost, with the
 * store's failure attached: the lease ran out while held, whatever the store would have
 * answered.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReleasePastDeadlineTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final AtomicBoolean failReleases = new AtomicBoolean();

	/** The in-memory store, whose releases fail once {@link #failReleases} is set. */
	private final LockProvider failing = (request) -> LockAttempt.of(() -> {
		String key = request.key();
		LockAttempt attempt = LockAttempt.join(this.store.tryLock(request));
		if (!(attempt instanceof LockAttempt.Acquired acquired)) {
			return attempt;
		}
		LockHandle handle = acquired.handle();
		return new LockAttempt.Acquired(new DelegatingHandle(handle) {

			@Override
			public boolean release() {
				if (ReleasePastDeadlineTests.this.failReleases.get()) {
					throw new LockBackendException(key, "The store did not answer (test)", new IllegalStateException());
				}
				return super.release();
			}

		});
	});

	@Test
	void aReleaseThatFailsAfterTheDeadlineReportsTheLoss() throws Exception {
		CountDownLatch stalled = new CountDownLatch(1);
		CountDownLatch resume = new CountDownLatch(1);
		// The first loss holds the scheduler's collecting thread, which runs every
		// deadline check, as a stopped JVM would: the held lease's check cannot run.
		LeaseLossListener stall = (lease, reason, holder) -> {
			stalled.countDown();
			try {
				resume.await(20, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		};
		try (RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate template = new DefaultLockTemplate(this.failing, scheduler,
						LockOptions.builder()
							.waitTime(Duration.ZERO)
							.leaseTime(Duration.ofSeconds(30))
							.autoRenew(false)
							.retryInterval(Duration.ofMillis(100))
							.build(),
						stall, false, LockObserver.NONE, HandoverSettings.OFF)) {
			Lease held = template.acquire("held", LockOptions.builder().leaseTime(Duration.ofMillis(300)).build());
			// After the acquire returned, so after it was sent: the lease's deadline runs
			// from the send, and the wait below must end past it however long the call
			// took to go out.
			long acquired = System.nanoTime();
			template.acquire("stalls-the-watch", LockOptions.builder().leaseTime(Duration.ofMillis(50)).build());
			assertThat(stalled.await(10, TimeUnit.SECONDS)).isTrue();
			long deadline = acquired + Duration.ofMillis(300).toNanos();
			while (System.nanoTime() - deadline <= 0) {
				// the condition is the time itself: the held lease's deadline passing
				Thread.sleep(10);
			}
			this.failReleases.set(true);
			try {
				assertThatExceptionOfType(LeaseLostException.class).isThrownBy(held::release)
					.satisfies((ex) -> assertThat(ex.getSuppressed())
						.hasAtLeastOneElementOfType(LockBackendException.class));
			}
			finally {
				resume.countDown();
			}
		}
	}

}
