package dev.distlock.support;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A release that fails because the store cannot be reached: its caller is told, the
 * release is tried again in the background until it gets through (so the lock is free
 * soon after the store answers again, not a lease later), and a waiter of the same JVM
 * that gives up meanwhile is told why the key is still held. Each template stands for one
 * JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PendingReleaseTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	private final FaultyStore store = new FaultyStore(Duration.ofSeconds(1));

	private final AtomicInteger losses = new AtomicInteger();

	@AutoClose
	private final Closing closing = new Closing();

	private DefaultLockTemplate template(LockOptions defaults) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler, defaults,
				(lease, reason, holder) -> this.losses.incrementAndGet(), false);
		this.closing.add(template);
		return template;
	}

	private DefaultLockTemplate template() {
		return template(LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(LEASE)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.build());
	}

	private static String key() {
		return "pending-" + UUID.randomUUID();
	}

	/**
	 * A lease of {@code key} from {@code jvm} whose release failed as the store was
	 * unreachable.
	 */
	private Lease failedRelease(DefaultLockTemplate jvm, String key) {
		Lease lease = jvm.acquire(key, LockOptions.defaults());
		this.store.unreachable = true;
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(lease::release)
			.withMessageContaining("could not be reached");
		return lease;
	}

	@Test
	void aReleaseThatFailedGetsThroughOnceTheStoreAnswersAgain() {
		DefaultLockTemplate jvm = template();
		String key = key();
		failedRelease(jvm, key);
		assertThat(jvm.pendingReleases()).isOne();
		Await.until("the release was tried again", Duration.ofSeconds(10), () -> this.store.failedReleases.get() >= 3);
		this.store.unreachable = false;
		long back = System.nanoTime();
		try (Lease next = template().acquire(key, LockOptions.defaults())) {
			assertThat(Duration.ofNanos(System.nanoTime() - back)).as("the lock free again")
				.isLessThan(Duration.ofSeconds(3));
		}
		// The retry's thread is told of its success just after the store released.
		Await.until("the retry done", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
		assertThat(this.store.releases).as("releases that reached the store").hasValue(2);
		assertThat(this.losses).as("losses reported").hasValue(0);
	}

	@Test
	void aWaiterOfTheSameJvmThatGivesUpMeanwhileIsToldTheReleaseIsPending() {
		DefaultLockTemplate jvm = template();
		String key = key();
		failedRelease(jvm, key);
		LockOptions briefly = LockOptions.builder().waitTime(Duration.ofMillis(200)).build();
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> jvm.acquire(key, briefly))
			.withMessageContaining("not acquired within 200ms")
			.withMessageContaining("release of it failed because the store could not be reached")
			.withCauseInstanceOf(LockBackendException.class);
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> template().acquire(key, briefly))
			.as("a waiter of another JVM, which knows nothing of the release")
			.withMessage("Lock '" + key + "' not acquired within 200ms")
			.withNoCause();
		this.store.unreachable = false;
		Await.until("the release got through", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> {
			Lease other = template().acquire(key, LockOptions.defaults());
			jvm.acquire(key, briefly);
			other.release();
		}).as("a waiter of the same JVM once the release got through").withNoCause();
	}

	/**
	 * A retried release that finds the lock gone (here: its lease ran out in the store
	 * meanwhile) ends without a second report: its holder was told at its release.
	 */
	@Test
	void aRetryThatFindsTheLockGoneEndsQuietly() {
		DefaultLockTemplate jvm = template();
		String key = key();
		failedRelease(jvm, key);
		assertThat(this.store.store.expire(key)).isTrue();
		Lease other = template().acquire(key, LockOptions.defaults());
		this.store.unreachable = false;
		Await.until("the retry ended", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
		assertThat(other.isHeld()).isTrue();
		assertThat(this.losses).as("losses reported").hasValue(0);
		other.release();
	}

	/** A retry stops when the lease would have ended anyway: the lock is free then. */
	@Test
	void retriesEndWithTheLease() {
		DefaultLockTemplate jvm = template(LockOptions.builder()
			.waitTime(Duration.ZERO)
			.leaseTime(Duration.ofMillis(600))
			.autoRenew(false)
			.retryInterval(Duration.ofMillis(100))
			.build());
		String key = key();
		failedRelease(jvm, key);
		Await.until("the retries ended", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
		int tries = this.store.failedReleases.get();
		Optional<Lease> next = template().tryAcquire(key,
				LockOptions.builder().waitTime(Duration.ofSeconds(5)).build());
		assertThat(next).isPresent();
		assertThat(this.store.failedReleases).as("tries after the lease ended").hasValue(tries);
		this.store.unreachable = false;
		next.get().release();
	}

}
