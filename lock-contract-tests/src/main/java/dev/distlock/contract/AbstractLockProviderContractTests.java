package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.spi.TokenBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every {@link LockProvider} must do, whatever its store. A provider module extends
 * this class and supplies a provider connected to a real, empty-enough store; every test
 * uses keys of its own.
 *
 * <p>
 * Expiry is provoked by short leases and observed by polling the provider itself, with a
 * deadline: no test sleeps in place of a condition.
 *
 * <p>
 * The capabilities a store may have are tested when it has them: release signals
 * ({@link ReleaseSignalling}), fair queues ({@link LockKind#FAIR}, asked of
 * {@link #otherProvider()}) and token blocks for local hand-over ({@link LocalHandover});
 * a store without one skips its tests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractLockProviderContractTests {

	/** Long enough that no test's lock expires while it is being checked. */
	protected static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/** Short enough that tests of expiry finish quickly. */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(200);

	/** A provider for the store under test; called once per test. */
	protected abstract LockProvider provider();

	/** A second provider on the same store, as another JVM would have. */
	protected abstract LockProvider otherProvider();

	private static String key() {
		return "contract-" + UUID.randomUUID();
	}

	@Test
	void acquiresAFreeLock() {
		String key = key();
		LockHandle handle = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(handle.key()).isEqualTo(key);
		assertThat(handle.fencingToken()).isPositive();
	}

	@Test
	void aHeldLockIsBusyForEveryOtherAttempt() {
		String key = key();
		acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.as("same provider, second attempt")
			.isInstanceOf(LockAttempt.Busy.class);
		LockAttempt other = LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertThat(other).as("other provider").isInstanceOf(LockAttempt.Busy.class);
		Duration remaining = ((LockAttempt.Busy) other).remaining();
		assertThat(remaining).isPositive().isLessThanOrEqualTo(LONG_LEASE);
	}

	@Test
	void differentKeysDoNotExcludeEachOther() {
		acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key(), LONG_LEASE))));
		acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key(), LONG_LEASE))));
	}

	@Test
	void releaseFreesTheLockForAnotherOwner() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(first.release()).isTrue();
		LockHandle second = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
	}

	@Test
	void aSecondReleaseDeletesNothing() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(first.release()).isTrue();
		LockHandle second = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(first.release()).as("release of a handle already released").isFalse();
		assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.as("the second holder still holds it")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(second.release()).isTrue();
	}

	@Test
	void aLockExpiresAfterItsLease() {
		String key = key();
		LockHandle expired = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		LockHandle next = awaitAcquired(otherProvider(), key, LONG_LEASE);
		assertThat(next.fencingToken()).isGreaterThan(expired.fencingToken());
	}

	@Test
	void releaseAfterExpiryNeverDeletesTheNextOwnersLock() {
		String key = key();
		LockHandle stale = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		LockHandle current = awaitAcquired(otherProvider(), key, LONG_LEASE);
		assertThat(stale.release()).as("stale holder's release").isFalse();
		assertThat(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.as("still held by the current owner")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(current.release()).isTrue();
	}

	@Test
	void aHandleOfTheSameProviderCannotReleaseAnotherAcquisition() {
		String key = key();
		LockHandle stale = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		LockHandle current = awaitAcquired(provider(), key, LONG_LEASE);
		assertThat(stale.release()).isFalse();
		assertThat(stale.renew(LONG_LEASE)).isFalse();
		assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(current.release()).isTrue();
	}

	@Test
	void renewExtendsTheLease() {
		String key = key();
		long firstLeaseOver = System.nanoTime() + SHORT_LEASE.multipliedBy(2).toNanos();
		LockHandle handle = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		assertThat(handle.renew(LONG_LEASE)).isTrue();
		// Looked at past the first lease's end, so that only the renewal can keep the
		// key:
		// right after it, a store that counts a renewal on a quorum (RedLock) may still
		// answer from a master the renewal has not reached yet.
		while (System.nanoTime() < firstLeaseOver) {
			LockSupport.parkNanos(firstLeaseOver - System.nanoTime());
		}
		LockAttempt attempt = LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertThat(attempt).as("attempt after the first lease's end").isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) attempt).remaining()).as("remaining lease after renewal")
			.isGreaterThan(SHORT_LEASE);
		assertThat(handle.release()).isTrue();
	}

	@Test
	void renewAfterExpiryNeitherRevivesNorExtendsTheNextOwnersLock() {
		String key = key();
		Duration currentLease = Duration.ofSeconds(2);
		LockHandle stale = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		LockHandle current = awaitAcquired(otherProvider(), key, currentLease);
		assertThat(stale.renew(LONG_LEASE)).as("stale holder's renewal").isFalse();
		LockAttempt attempt = LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) attempt).remaining())
			.as("the current owner's lease, not extended by the stale renewal")
			.isLessThanOrEqualTo(currentLease);
		assertThat(current.release()).isTrue();
	}

	@Test
	void renewOfAnExpiredLockWithNoNextOwnerFails() {
		String key = key();
		LockHandle handle = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, SHORT_LEASE))));
		LockHandle next = awaitAcquired(otherProvider(), key, LONG_LEASE);
		assertThat(next.release()).isTrue();
		assertThat(handle.renew(LONG_LEASE)).isFalse();
		acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
	}

	/**
	 * A caller interrupted while its attempt is on the wire may get an exception instead
	 * of the reply; the attempt must then leave no lock behind, or every caller would
	 * wait out a whole lease for an owner nobody knows. A store may clean up in the
	 * background (Redis sends an owner-checked delete after the lost acquire), so the
	 * lock must be free within seconds, far sooner than its lease. The interrupt flag is
	 * the caller's and must survive.
	 */
	@Test
	void anAttemptWhoseReplyIsLostToAnInterruptLeavesNoLockBehind() {
		for (int i = 0; i < 10; i++) {
			String key = key();
			LockAttempt attempt = null;
			boolean stillInterrupted;
			Thread.currentThread().interrupt();
			try {
				attempt = LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
			}
			catch (RuntimeException ex) {
				// The store reported the interrupt; what matters is what it left behind.
			}
			finally {
				stillInterrupted = Thread.interrupted();
			}
			assertThat(stillInterrupted).as("interrupt flag kept").isTrue();
			if (attempt instanceof LockAttempt.Acquired acquired) {
				assertThat(acquired.handle().release()).isTrue();
			}
			assertThat(awaitAcquired(otherProvider(), key, LONG_LEASE).release()).isTrue();
		}
	}

	@Test
	void fencingTokensIncreaseAcrossAcquisitionsAndKeys() {
		long previous = 0;
		for (int i = 0; i < 20; i++) {
			LockProvider provider = (i % 2 == 0) ? provider() : otherProvider();
			LockHandle handle = acquired(LockAttempt.join(
					provider.tryLock(LockRequest.exclusive((i % 3 == 0) ? key() : "contract-fixed-" + i, LONG_LEASE))));
			assertThat(handle.fencingToken()).isGreaterThan(previous);
			previous = handle.fencingToken();
			assertThat(handle.release()).isTrue();
		}
	}

	/**
	 * A store with {@link LocalHandover} reserves the whole block with the acquisition:
	 * the next owner's token, from any provider, lies past the block's last token, and a
	 * block attempt on a held lock is busy, as a plain one.
	 */
	@Test
	void aTokenBlockIsReservedWithTheAcquisition() {
		assumeTrue(provider() instanceof LocalHandover, "the store does not reserve token blocks");
		String key = key();
		// A store whose tokens follow a clock may pass this check by the clock alone; it
		// tests the reservation with a counter ahead of its clock (RedisHandoverTests).
		// A large block here would leave a shared counter ahead of the clock for the
		// store's other tests.
		int size = 10;
		LockHandle handle = acquired(LockAttempt
			.join(((LocalHandover) provider()).tryLock(LockRequest.exclusive(key, LONG_LEASE).withTokens(size))));
		assertThat(handle).isInstanceOf(TokenBlock.class);
		TokenBlock block = (TokenBlock) handle;
		assertThat(block.lastToken()).isEqualTo(block.fencingToken() + size - 1);
		assertThat(LockAttempt
			.join(((LocalHandover) otherProvider()).tryLock(LockRequest.exclusive(key, LONG_LEASE).withTokens(size))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(block.renew(LONG_LEASE)).isTrue();
		assertThat(block.release()).isTrue();
		LockHandle next = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(next.fencingToken()).isGreaterThan(block.lastToken());
		assertThat(next.release()).isTrue();
	}

	/**
	 * A store with {@link LocalHandover} tells, at release, that a waiter of another
	 * provider marked the key while it was held ({@link TokenBlock#releasedToWaiters()}).
	 */
	@Test
	void aReleaseTellsThatAnotherWaiterMarkedTheKey() {
		assumeTrue(provider() instanceof LocalHandover && otherProvider() instanceof ReleaseSignalling,
				"the store does not reserve token blocks");
		String key = key();
		TokenBlock block = (TokenBlock) acquired(LockAttempt.join(((LocalHandover) provider())
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWaiting(true).withTokens(4))));
		assertThat(LockAttempt.join(((ReleaseSignalling) otherProvider())
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWaiting(true)))).isInstanceOf(LockAttempt.Busy.class);
		assertThat(block.release()).isTrue();
		assertThat(block.releasedToWaiters()).isTrue();
	}

	@Test
	void exactlyOneOfManyConcurrentAttemptsAcquires() throws Exception {
		int attempts = 16;
		for (int round = 0; round < 10; round++) {
			String key = key();
			ExecutorService pool = Executors.newFixedThreadPool(attempts);
			try {
				CountDownLatch start = new CountDownLatch(1);
				List<Future<LockAttempt>> results = new ArrayList<>();
				for (int i = 0; i < attempts; i++) {
					LockProvider provider = (i % 2 == 0) ? provider() : otherProvider();
					results.add(pool.submit(() -> {
						start.await();
						return LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG_LEASE)));
					}));
				}
				start.countDown();
				int acquired = 0;
				for (Future<LockAttempt> result : results) {
					if (result.get(10, TimeUnit.SECONDS) instanceof LockAttempt.Acquired) {
						acquired++;
					}
				}
				assertThat(acquired).as("acquired in round " + round).isEqualTo(1);
			}
			finally {
				pool.shutdownNow();
			}
		}
	}

	/**
	 * A store that signals releases ({@link ReleaseSignalling}, with signals other than
	 * {@link ReleaseSignals#NONE}) tells a subscriber of the key when its holder releases
	 * it, so that waiters need not poll.
	 */
	@Test
	void aReleaseIsSignalledToTheKeysSubscribers() {
		assumeTrue(provider() instanceof ReleaseSignalling signalling
				&& signalling.releaseSignals() != ReleaseSignals.NONE, "the store does not signal releases");
		ReleaseSignalling waiting = (ReleaseSignalling) otherProvider();
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		AtomicInteger signals = new AtomicInteger();
		try (ReleaseSignals.Subscription subscription = waiting.releaseSignals()
			.subscribe(key, signals::incrementAndGet)) {
			assertThat(LockAttempt.join(waiting.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWaiting(true))))
				.isInstanceOf(LockAttempt.Busy.class);
			await("signals of the key are received", Duration.ofSeconds(10),
					() -> waiting.releaseSignals().isListening(key));
			int before = signals.get();
			assertThat(held.release()).isTrue();
			await("the release is signalled", Duration.ofSeconds(10), () -> signals.get() > before);
		}
		acquired(LockAttempt.join(waiting.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWaiting(true))));
	}

	/**
	 * A store with fair locks ({@link LockKind#FAIR}) gives a free lock to the waiter
	 * that queued first; the others stay busy until their turn.
	 */
	@Test
	void fairWaitersTakeTheLockInTheOrderTheyQueued() {
		LockProvider fair = fairLocking();
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "first", LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "second", LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(held.release()).isTrue();
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "second", LONG_LEASE))))
			.as("second waiter, before the first")
			.isInstanceOf(LockAttempt.Busy.class);
		LockHandle first = acquired(
				LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "first", LONG_LEASE))));
		assertThat(first.fencingToken()).isGreaterThan(held.fencingToken());
		assertThat(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))))
			.as("a plain attempt while the first waiter holds it")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(first.release()).isTrue();
		LockHandle second = acquired(
				LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "second", LONG_LEASE))));
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(second.release()).isTrue();
	}

	/**
	 * A fair waiter that stops asking (its JVM died) keeps its place for its queue
	 * timeout only: then the next waiter's turn comes.
	 */
	@Test
	void aFairWaiterThatStopsAskingLosesItsPlaceAfterItsQueueTimeout() {
		LockProvider fair = fairLocking();
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "dead", Duration.ofSeconds(1)))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "live", LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(held.release()).isTrue();
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "live", LONG_LEASE))))
			.as("while the dead waiter's place is kept")
			.isInstanceOf(LockAttempt.Busy.class);
		LockHandle live = awaitAcquired(
				() -> LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "live", LONG_LEASE))), key);
		assertThat(live.release()).isTrue();
	}

	/** A fair waiter that gives up lets the next one in at once. */
	@Test
	void aFairWaiterThatLeavesTheQueueLetsTheNextOneIn() {
		LockProvider fair = fairLocking();
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "leaving", LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "next", LONG_LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(held.release()).isTrue();
		fair.withdraw(LockRequest.fair(key, LONG_LEASE, "leaving", LONG_LEASE));
		assertThat(acquired(LockAttempt.join(fair.tryLock(LockRequest.fair(key, LONG_LEASE, "next", LONG_LEASE))))
			.release()).isTrue();
	}

	private LockProvider fairLocking() {
		assumeTrue(otherProvider().kinds().contains(LockKind.FAIR), "the store has no fair locks");
		return otherProvider();
	}

	protected static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected the lock to be acquired but was " + attempt);
	}

	/**
	 * Retries until the lock is free (it must expire within its lease plus the store's
	 * expiry precision).
	 */
	protected static LockHandle awaitAcquired(LockProvider provider, String key, Duration leaseTime) {
		return awaitAcquired(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, leaseTime))), key);
	}

	private static LockHandle awaitAcquired(Supplier<LockAttempt> attempt, String key) {
		long deadline = System.nanoTime() + SHORT_LEASE.plusSeconds(5).toNanos();
		while (System.nanoTime() < deadline) {
			if (attempt.get() instanceof LockAttempt.Acquired acquired) {
				return acquired.handle();
			}
			LockSupport.parkNanos(1_000_000);
		}
		return fail("lock '" + key + "' was not free in time");
	}

	protected static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("timed out after " + timeout + " waiting for: " + what);
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

}
