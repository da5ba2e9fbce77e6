package dev.distlock.inmemory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * What is particular to the in-memory store: bounded memory, the test hook that ends a
 * lease, and a fair attempt asked twice. The provider contract itself runs in
 * lock-contract-tests ({@code InMemoryLockProviderContractTests}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InMemoryLockProviderTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@Test
	void aReleasedKeyWithNobodyWaitingLeavesNothingBehind() {
		LockHandle handle = acquired(LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", LEASE))));
		ReleaseSignals.Subscription subscription = this.store.releaseSignals().subscribe("k", () -> {
		});
		assertThat(handle.release()).isTrue();
		assertThat(this.store.storedKeys()).as("keys while a subscriber waits").isOne();
		subscription.close();
		subscription.close();
		assertThat(this.store.storedKeys()).as("keys once the subscriber is gone").isZero();
	}

	/** Keys locked once and never touched again do not accumulate. */
	@Test
	void expiredKeysDoNotAccumulate() {
		for (int i = 0; i < 20_000; i++) {
			acquired(LockAttempt.join(this.store.tryLock(LockRequest.exclusive("expiring-" + i, Duration.ofNanos(1)))));
		}
		assertThat(this.store.storedKeys()).as("keys left of 20,000 expired locks").isLessThan(1000);
	}

	@Test
	void expireEndsTheLeaseAtOnceAndSignalsWaiters() {
		LockHandle handle = acquired(LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", LEASE))));
		AtomicInteger signals = new AtomicInteger();
		try (ReleaseSignals.Subscription subscription = this.store.releaseSignals()
			.subscribe("k", signals::incrementAndGet)) {
			assertThat(this.store.expire("k")).isTrue();
			assertThat(signals).hasValue(1);
			assertThat(this.store.expire("k")).as("a second expire, with no holder").isFalse();
		}
		assertThat(handle.renew(LEASE)).isFalse();
		assertThat(handle.release()).isFalse();
		LockHandle next = acquired(LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", LEASE))));
		assertThat(next.fencingToken()).isGreaterThan(handle.fencingToken());
		assertThat(next.release()).isTrue();
		assertThat(this.store.storedKeys()).isZero();
	}

	/**
	 * The same fair attempt asked again (as a client re-sending a command would) gets its
	 * acquisition back, instead of queueing behind its own lock.
	 */
	@Test
	void aFairAttemptAskedTwiceKeepsTheLockItTook() {
		LockHandle first = acquired(
				LockAttempt.join(this.store.tryLock(LockRequest.fair("k", LEASE, "waiter", LEASE))));
		LockHandle again = acquired(
				LockAttempt.join(this.store.tryLock(LockRequest.fair("k", LEASE, "waiter", LEASE))));
		assertThat(again.fencingToken()).isEqualTo(first.fencingToken());
		assertThat(this.store.queueLength("k")).isZero();
		assertThat(LockAttempt.join(this.store.tryLock(LockRequest.fair("k", LEASE, "another", LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(first.release()).isTrue();
		this.store.withdraw(LockRequest.fair("k", LEASE, "another", LEASE));
		assertThat(this.store.storedKeys()).isZero();
	}

	@Test
	void aBusyAnswerCarriesTheRemainingLease() {
		acquired(LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", LEASE))));
		LockAttempt busy = LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", LEASE)));
		assertThat(busy).isInstanceOfSatisfying(LockAttempt.Busy.class,
				(b) -> assertThat(b.remaining()).isPositive().isLessThanOrEqualTo(LEASE));
	}

	@Test
	void leasesMustBePositive() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> LockAttempt.join(this.store.tryLock(LockRequest.exclusive("k", Duration.ZERO))));
		assertThat(this.store.storeName()).isEqualTo("in-memory");
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
