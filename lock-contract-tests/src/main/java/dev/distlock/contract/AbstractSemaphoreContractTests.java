package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.contract.ContractTemplates.acquired;
import static dev.distlock.contract.ContractTemplates.assertBusy;
import static dev.distlock.contract.ContractTemplates.awaitAcquired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every store with semaphores ({@link LockKind#PERMITS}) must do: at most N permits
 * held, each with its own owner-checked handle and fencing token; permits of a dead
 * holder come back after their lease (Redisson #4462, #2045); nobody frees a permit they
 * do not hold (Redisson #5066); a mismatched permit count is an error; and, through
 * {@link DefaultLockTemplate}s standing for JVMs, N freed permits wake N waiters
 * (Redisson #6664), each permit renewed by the watchdog and lost loudly.
 *
 * <p>
 * A store module extends this class and supplies two providers on one real store, as two
 * JVMs would have.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractSemaphoreContractTests {

	/** Long enough that no test's permit expires while it is being checked. */
	protected static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/** Short enough that tests of expiry finish quickly. */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(200);

	private final ContractTemplates templates = new ContractTemplates();

	/** A provider for the store under test; called once per test or more. */
	protected abstract LockProvider provider();

	/** A second provider on the same store, as another JVM would have. */
	protected abstract LockProvider otherProvider();

	@AfterEach
	void closeTemplates() throws Exception {
		this.templates.close();
	}

	private static String key() {
		return "sem-contract-" + UUID.randomUUID();
	}

	private static LockOptions permits(int permits) {
		return LockOptions.builder().permits(permits).build();
	}

	@Test
	void atMostNPermitsAreHeldEachWithItsOwnToken() {
		String key = key();
		Set<Long> tokens = new HashSet<>();
		List<LockHandle> held = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			LockProvider provider = (i % 2 == 0) ? provider() : otherProvider();
			LockHandle permit = acquired(LockAttempt.join(provider.tryLock(LockRequest.permit(key, 3, LONG_LEASE))));
			assertThat(permit.key()).isEqualTo(key);
			assertThat(permit.fencingToken()).isPositive();
			tokens.add(permit.fencingToken());
			held.add(permit);
		}
		assertThat(tokens).as("one token per permit").hasSize(3);
		LockAttempt busy = LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 3, LONG_LEASE)));
		assertBusy("a fourth permit of three", busy);
		assertThat(((LockAttempt.Busy) busy).remaining()).isPositive().isLessThanOrEqualTo(LONG_LEASE);
		assertThat(held.get(1).release()).isTrue();
		LockHandle next = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 3, LONG_LEASE))));
		assertThat(next.fencingToken()).as("tokens rise")
			.isGreaterThan(tokens.stream().mapToLong(Long::longValue).max().orElseThrow());
		assertBusy("a fourth permit again",
				LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 3, LONG_LEASE))));
	}

	@Test
	@DisplayName("Only the holder of a permit can free it, once (Redisson #5066: release of a permit never taken)")
	void onlyTheHolderOfAPermitCanFreeItOnce() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		assertThat(first.release()).isTrue();
		LockHandle second = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		assertThat(first.release()).as("a second release of the first permit").isFalse();
		assertThat(first.renew(LONG_LEASE)).as("a renewal of the released permit").isFalse();
		assertBusy("the one permit is still the second holder's",
				LockAttempt.join(provider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		assertThat(second.release()).isTrue();
	}

	@Test
	@DisplayName("A dead holder's permit comes back after its lease (Redisson #4462, #2045: permits leak on crash)")
	void aDeadHoldersPermitComesBackAfterItsLease() {
		String key = key();
		LockHandle dead = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 2, SHORT_LEASE))));
		LockHandle live = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		assertBusy("both permits held",
				LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		LockHandle next = awaitAcquired("the dead holder's permit", SHORT_LEASE,
				() -> LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		assertThat(dead.release()).as("the dead holder's late release").isFalse();
		assertThat(dead.renew(LONG_LEASE)).as("the dead holder's late renewal").isFalse();
		assertBusy("the late calls freed nothing",
				LockAttempt.join(provider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		assertThat(live.release()).isTrue();
		assertThat(next.release()).isTrue();
	}

	@Test
	void renewExtendsOnlyThatPermit() {
		String key = key();
		LockHandle renewed = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 2, SHORT_LEASE))));
		LockHandle other = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 2, SHORT_LEASE))));
		assertThat(renewed.renew(LONG_LEASE)).isTrue();
		LockHandle next = awaitAcquired("the unrenewed permit to expire", SHORT_LEASE,
				() -> LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		assertBusy("the renewed permit is still held",
				LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 2, LONG_LEASE))));
		assertThat(other.release()).isFalse();
		assertThat(renewed.release()).isTrue();
		assertThat(next.release()).isTrue();
	}

	@Test
	void aMismatchedPermitCountIsAnErrorNamingBothCounts() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 3, LONG_LEASE))));
		assertThatExceptionOfType(PermitCountMismatchException.class)
			.isThrownBy(() -> LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 4, LONG_LEASE))))
			.withMessageContaining(key)
			.withMessageContaining("3")
			.withMessageContaining("4")
			.satisfies((ex) -> assertThat(ex.getDeclaredPermits()).isEqualTo(3))
			.satisfies((ex) -> assertThat(ex.getRequestedPermits()).isEqualTo(4));
		assertThat(held.release()).isTrue();
		assertThat(
				acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 4, LONG_LEASE)))).release())
			.as("once nobody holds a permit, the count may change")
			.isTrue();
	}

	@Test
	void aSemaphoreAndALockOfTheSameKeyAreUnrelated() {
		String key = key();
		LockHandle lock = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		LockHandle permit = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		assertThat(permit.release()).isTrue();
		assertBusy("the lock", LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(lock.release()).isTrue();
	}

	@Test
	void aFreedPermitIsSignalled() {
		ReleaseSignals signals = (otherProvider() instanceof ReleaseSignalling signalling) ? signalling.permitSignals()
				: ReleaseSignals.NONE;
		assumeTrue(signals != ReleaseSignals.NONE, "the store does not signal freed permits");
		String key = key();
		AtomicInteger signalled = new AtomicInteger();
		try (ReleaseSignals.Subscription subscription = signals.subscribe(key, signalled::incrementAndGet)) {
			LockHandle permit = acquired(LockAttempt.join(provider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
			assertBusy("no permit left", LockAttempt
				.join(otherProvider().tryLock(LockRequest.permit(key, 1, LONG_LEASE).withWaiting(true))));
			Conditions.await("the subscription to listen on the key", Duration.ofSeconds(10),
					() -> signals.isListening(key));
			int before = signalled.get();
			assertThat(permit.release()).isTrue();
			Conditions.await("the freed permit to be signalled", Duration.ofSeconds(10),
					() -> signalled.get() > before);
		}
	}

	/**
	 * Three permits, all held; a waiter in each of three other JVMs, and three more
	 * threads in one of them. Their retry interval is a minute, so only signals can wake
	 * them within the test's bound: each batch of freed permits must let in as many
	 * waiters.
	 */
	@Test
	@DisplayName("N freed permits wake N waiters across JVMs and within one (Redisson #6664: a waiter never woken)")
	void nFreedPermitsWakeNWaiters() throws Exception {
		String key = key();
		// Held for minutes, so that no waiter's hint (the first permit's expiry) wakes
		// it.
		DefaultLockTemplate holderJvm = this.templates.template(provider(), Duration.ofMinutes(2));
		List<Lease> held = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			held.add(holderJvm.acquire(key, permits(3)));
		}
		AtomicInteger busy = new AtomicInteger();
		List<DefaultLockTemplate> waiterJvms = List.of(
				this.templates.template(ContractTemplates.countingBusy(otherProvider(), busy), LONG_LEASE),
				this.templates.template(ContractTemplates.countingBusy(provider(), busy), LONG_LEASE),
				this.templates.template(ContractTemplates.countingBusy(otherProvider(), busy), LONG_LEASE));
		CountDownLatch in = new CountDownLatch(3);
		CountDownLatch leave = new CountDownLatch(1);
		List<CompletableFuture<Void>> waiters = new ArrayList<>();
		for (DefaultLockTemplate jvm : waiterJvms) {
			waiters.add(CompletableFuture.runAsync(() -> jvm.run(key, permits(3), () -> {
				in.countDown();
				ContractTemplates.await(leave);
			}), TestThreads.EACH));
		}
		Conditions.await("three waiters", Duration.ofSeconds(10), () -> waiterJvms.stream()
			.allMatch((jvm) -> jvm.waitingThreads().getOrDefault(key + " (permits)", 0) == 1));
		// Each found no permit while listening, so waits for a signal, not a short
		// backoff.
		Conditions.await("the waiters to find no permit while listening", Duration.ofSeconds(10),
				() -> busy.get() >= 3);
		held.forEach(Lease::release);
		assertThat(in.await(20, TimeUnit.SECONDS)).as("three freed permits let in the three waiters").isTrue();
		// Now three threads of one JVM wait behind the three holders.
		DefaultLockTemplate crowded = waiterJvms.get(0);
		int busyBefore = busy.get();
		CountDownLatch crowdIn = new CountDownLatch(3);
		List<CompletableFuture<Void>> crowd = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			crowd.add(CompletableFuture.runAsync(() -> crowded.run(key, permits(3), crowdIn::countDown),
					TestThreads.EACH));
		}
		Conditions.await("three more waiters in one JVM", Duration.ofSeconds(10),
				() -> crowded.waitingThreads().getOrDefault(key + " (permits)", 0) == 3);
		Conditions.await("the first of them to find no permit while listening", Duration.ofSeconds(10),
				() -> busy.get() > busyBefore);
		leave.countDown();
		assertThat(crowdIn.await(20, TimeUnit.SECONDS)).as("the local line lets them in one after another").isTrue();
		CompletableFuture.allOf(waiters.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
		CompletableFuture.allOf(crowd.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
	}

	@Test
	void aPermitHolderReEntersItsPermitAndAMismatchedNestedCountIsRefused() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		jvm.run(key, permits(1), () -> {
			long token = LockContext.current().orElseThrow().fencingToken();
			jvm.run(key, permits(1),
					() -> assertThat(LockContext.current().orElseThrow().fencingToken()).isEqualTo(token));
			assertThatExceptionOfType(PermitCountMismatchException.class)
				.isThrownBy(() -> jvm.run(key, permits(2), () -> {
				}));
			jvm.run(key,
					() -> assertThat(LockContext.current().orElseThrow().fencingToken())
						.as("the lock of the same key is another acquisition")
						.isNotEqualTo(token));
		});
		assertThat(jvm.heldLocks()).isZero();
	}

	@Test
	void theLossOfAPermitIsNotSilent() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		Lease lease = jvm.acquire(key,
				LockOptions.builder().permits(2).leaseTime(SHORT_LEASE).autoRenew(false).build());
		Conditions.await("the unrenewed permit to run out", SHORT_LEASE.plusSeconds(5), () -> !lease.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
	}

	@Test
	@Tag("slow")
	void theWatchdogKeepsAPermitPastItsLease() {
		String key = key();
		// A second, not less: a loaded machine must not make the watchdog look late.
		DefaultLockTemplate jvm = this.templates.template(provider(), Duration.ofSeconds(1));
		Lease lease = jvm.acquire(key, permits(1));
		long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		Conditions.await("three leases to pass", Duration.ofSeconds(10), () -> System.nanoTime() - until > 0);
		assertThat(lease.isHeld()).isTrue();
		assertBusy("the renewed permit is still held",
				LockAttempt.join(otherProvider().tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		lease.release();
	}

}
