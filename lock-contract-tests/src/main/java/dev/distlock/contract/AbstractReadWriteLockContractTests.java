package dev.distlock.contract;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.spi.TokenBlock;
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
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What every store with read-write locks ({@link LockKind#SHARED}) must do: readers share
 * a key, the plain lock is the writer's side and excludes them, a waiting writer holds
 * new readers back (no writer starvation, Redisson #5379), a read hold that is not
 * renewed expires (a dead instance's reads are not kept alive, Redisson PR #7098), every
 * handle is owner-checked; and, through {@link DefaultLockTemplate}s standing for two
 * JVMs, that waiters are woken by signals and re-entry follows {@link LockMode}'s rules.
 *
 * <p>
 * A store module extends this class and supplies two providers on one real store, as two
 * JVMs would have.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractReadWriteLockContractTests {

	/** Long enough that no test's hold expires while it is being checked. */
	protected static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/** Short enough that tests of expiry finish quickly. */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(200);

	private static final LockOptions READ = LockOptions.builder().mode(LockMode.READ).build();

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
		return "rw-contract-" + UUID.randomUUID();
	}

	@Test
	void readersShareAKey() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		LockHandle second = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(first.key()).isEqualTo(key);
		assertThat(second.fencingToken()).isPositive().isNotEqualTo(first.fencingToken());
		assertThat(first.release()).isTrue();
		assertThat(second.release()).isTrue();
	}

	@Test
	void aReaderExcludesTheWriterUntilTheLastReaderLeaves() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		LockHandle second = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		LockAttempt busy = LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertBusy("writer while two readers hold", busy);
		assertThat(((LockAttempt.Busy) busy).remaining()).isPositive();
		assertThat(first.release()).isTrue();
		assertBusy("writer while one reader holds",
				LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(second.release()).isTrue();
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE)))).release())
			.isTrue();
	}

	@Test
	void theWriterExcludesReaders() {
		String key = key();
		LockHandle writer = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		LockAttempt busy = LockAttempt.join(otherProvider().tryLock(LockRequest.shared(key, LONG_LEASE)));
		assertBusy("reader while the writer holds", busy);
		assertThat(((LockAttempt.Busy) busy).remaining()).isPositive().isLessThanOrEqualTo(LONG_LEASE);
		assertThat(writer.release()).isTrue();
		assertThat(acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.isTrue();
	}

	@Test
	@DisplayName("A waiting writer's intent holds new readers back (Redisson #5379: readers starve a waiting writer)")
	void aWaitingWritersIntentHoldsNewReadersBack() {
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertBusy("writer while a reader holds", LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
		assertBusy("a new reader while a writer waits",
				LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE).withWaiting(true))));
		assertThat(reader.release()).isTrue();
		LockHandle writer = acquired(LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
		assertBusy("a reader while the writer holds",
				LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(writer.release()).isTrue();
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.as("taking the key ended the writer's intent")
			.isTrue();
	}

	/**
	 * With local hand-over, a waiting writer's first attempt is the block-reserving
	 * acquire: behind readers it records the intent as {@code tryLockExclusive} does, and
	 * the writer's later attempt that takes the key ends it.
	 */
	@Test
	void aWritersBlockReservingFirstAttemptRecordsItsIntent() {
		assumeTrue(otherProvider() instanceof LocalHandover, "the store has no local hand-over");
		LocalHandover writers = (LocalHandover) otherProvider();
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertBusy("writer's first attempt while a reader holds", LockAttempt
			.join(writers.tryLock(LockRequest.exclusive(key, LONG_LEASE).withTokens(33).withWriter("w1", LONG_LEASE))));
		assertBusy("a new reader while the writer waits",
				LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE).withWaiting(true))));
		assertThat(reader.release()).isTrue();
		LockHandle writer = acquired(LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
		assertThat(writer.fencingToken()).isGreaterThan(reader.fencingToken());
		assertThat(writer.release()).isTrue();
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.as("taking the key ended the writer's intent")
			.isTrue();
		LockHandle second = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertBusy("another writer's first attempt", LockAttempt
			.join(writers.tryLock(LockRequest.exclusive(key, LONG_LEASE).withTokens(33).withWriter("w2", LONG_LEASE))));
		otherProvider()
			.withdraw(LockRequest.exclusive(key, LONG_LEASE).withWriter("w2", LONG_LEASE).withIntentRecorded(true));
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.as("a reader once the intent was withdrawn")
			.isTrue();
		assertThat(second.release()).isTrue();
		TokenBlock free = (TokenBlock) acquired(LockAttempt
			.join(writers.tryLock(LockRequest.exclusive(key, LONG_LEASE).withTokens(33).withWriter("w3", LONG_LEASE))));
		assertThat(free.lastToken()).as("a free key gives the writer its block").isEqualTo(free.fencingToken() + 32);
		assertBusy("a reader while the writer holds",
				LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(free.release()).isTrue();
	}

	@Test
	void anExclusiveAttemptIsThePlainLock() {
		String key = key();
		LockHandle writer = acquired(LockAttempt.join(provider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
		assertBusy("the plain lock", LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertBusy("another writer", LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w2", LONG_LEASE).withIntentRecorded(true))));
		assertThat(writer.release()).isTrue();
		LockHandle plain = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(plain.fencingToken()).isGreaterThan(writer.fencingToken());
		assertBusy("a writer while the plain lock is held", LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w2", LONG_LEASE).withIntentRecorded(true))));
		assertThat(plain.release()).isTrue();
		otherProvider()
			.withdraw(LockRequest.exclusive(key, LONG_LEASE).withWriter("w2", LONG_LEASE).withIntentRecorded(true));
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.isTrue();
	}

	@Test
	void aWithdrawnIntentLetsReadersIn() {
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertBusy("writer", LockAttempt.join(otherProvider()
			.tryLock(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
		assertBusy("reader behind the intent",
				LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE).withWaiting(true))));
		otherProvider()
			.withdraw(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true));
		assertThat(acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE)))).release())
			.isTrue();
		assertThat(reader.release()).isTrue();
	}

	@Test
	void theIntentOfAWriterThatStopsAskingLapses() {
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertBusy("writer",
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)
					.withWriter("dead-writer", SHORT_LEASE)
					.withIntentRecorded(true))));
		assertThat(awaitAcquired("a reader after the dead writer's intent lapsed", SHORT_LEASE,
				() -> LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))))
			.release()).isTrue();
		assertThat(reader.release()).isTrue();
	}

	@Test
	@DisplayName("A read hold that is not renewed expires (Redisson PR #7098: a dead instance's reads kept alive)")
	void aReadHoldThatIsNotRenewedExpires() {
		String key = key();
		LockHandle dead = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, SHORT_LEASE))));
		LockHandle live = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(live.renew(LONG_LEASE)).as("renewing one reader").isTrue();
		assertBusy("writer while the live reader holds",
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(live.release()).isTrue();
		LockHandle writer = awaitAcquired("the writer, once the dead reader's hold expired", SHORT_LEASE,
				() -> LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(dead.renew(LONG_LEASE)).as("renewal of the expired read hold").isFalse();
		assertThat(dead.release()).as("release of the expired read hold").isFalse();
		assertThat(writer.release()).isTrue();
	}

	@Test
	void renewExtendsAReadHold() {
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, SHORT_LEASE))));
		assertThat(reader.renew(LONG_LEASE)).isTrue();
		LockAttempt attempt = LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)));
		assertBusy("writer", attempt);
		assertThat(((LockAttempt.Busy) attempt).remaining()).as("remaining read lease after renewal")
			.isGreaterThan(SHORT_LEASE);
		assertThat(reader.release()).isTrue();
	}

	@Test
	void aReadHandleReleasesOnlyItsOwnHold() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		LockHandle second = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(first.release()).isTrue();
		assertThat(first.release()).as("a second release").isFalse();
		assertBusy("writer while the second reader holds",
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(second.release()).isTrue();
	}

	@Test
	void theWritersTokenRisesAboveEveryEarlierHold() {
		String key = key();
		LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
		assertThat(reader.release()).isTrue();
		LockHandle writer = acquired(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(writer.fencingToken()).isGreaterThan(reader.fencingToken());
		assertThat(writer.release()).isTrue();
	}

	@Test
	void theLastReadersReleaseAndTheWritersReleaseAreSignalled() {
		assumeTrue(signals(otherProvider()) != ReleaseSignals.NONE, "the store does not signal releases");
		ReleaseSignals signals = signals(otherProvider());
		String key = key();
		AtomicInteger signalled = new AtomicInteger();
		try (ReleaseSignals.Subscription subscription = signals.subscribe(key, signalled::incrementAndGet)) {
			LockHandle reader = acquired(LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE))));
			assertBusy("writer", LockAttempt.join(otherProvider().tryLock(
					LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
			// Per key: a cluster's sharded signals listen per slot, from this call on.
			Conditions.await("the subscription to listen on the key", Duration.ofSeconds(10),
					() -> signals.isListening(key));
			int before = signalled.get();
			assertThat(reader.release()).isTrue();
			Conditions.await("the last reader's release to be signalled", Duration.ofSeconds(10),
					() -> signalled.get() > before);
			LockHandle writer = acquired(LockAttempt.join(otherProvider().tryLock(
					LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
			assertBusy("reader",
					LockAttempt.join(provider().tryLock(LockRequest.shared(key, LONG_LEASE).withWaiting(true))));
			int beforeWriter = signalled.get();
			assertThat(writer.release()).isTrue();
			Conditions.await("the writer's release to be signalled", Duration.ofSeconds(10),
					() -> signalled.get() > beforeWriter);
		}
	}

	@Test
	void readersOfTwoJvmsHoldAtOnceAndTheWriterWaitsForBoth() throws Exception {
		String key = key();
		DefaultLockTemplate jvm1 = this.templates.template(provider(), LONG_LEASE);
		DefaultLockTemplate jvm2 = this.templates.template(otherProvider(), LONG_LEASE);
		Lease first = jvm1.acquire(key, READ);
		Lease second = jvm2.acquire(key, READ);
		assertThat(jvm1.tryAcquire(key, LockOptions.builder().waitTime(Duration.ZERO).build())).isEmpty();
		CompletableFuture<Long> writer = CompletableFuture.supplyAsync(() -> {
			try (Lease lease = jvm2.acquire(key, LockOptions.defaults())) {
				return lease.fencingToken();
			}
		}, TestThreads.EACH);
		first.release();
		assertThat(writer).isNotDone();
		second.release();
		assertThat(writer.get(20, TimeUnit.SECONDS)).isGreaterThan(second.fencingToken());
	}

	/**
	 * The readers' retry interval is a minute: only the writer's release signal lets them
	 * in within the test's bound.
	 */
	@Test
	void waitingReadersOfEveryJvmAreWokenByTheWritersRelease() throws Exception {
		assumeFalse(otherProvider() instanceof ReleaseSignalling && signals(otherProvider()) == ReleaseSignals.NONE,
				"the store's waiters poll: no signal wakes them");
		String key = key();
		// Held for minutes, so that no waiter's hint (the writer's lease) wakes it.
		DefaultLockTemplate jvm1 = this.templates.template(provider(), Duration.ofMinutes(2));
		AtomicInteger busy = new AtomicInteger();
		DefaultLockTemplate jvm2 = this.templates.template(ContractTemplates.countingBusy(otherProvider(), busy),
				LONG_LEASE);
		Lease writer = jvm1.acquire(key, LockOptions.defaults());
		CountDownLatch allIn = new CountDownLatch(4);
		CountDownLatch leave = new CountDownLatch(1);
		CompletableFuture<?>[] readers = new CompletableFuture<?>[4];
		for (int i = 0; i < readers.length; i++) {
			DefaultLockTemplate jvm = (i % 2 == 0) ? jvm1 : jvm2;
			readers[i] = CompletableFuture.runAsync(() -> jvm.run(key, READ, () -> {
				allIn.countDown();
				ContractTemplates.await(leave);
			}), TestThreads.EACH);
		}
		Conditions.await("the readers to wait", Duration.ofSeconds(10),
				() -> jvm1.waitingThreads().getOrDefault(key + " (read)", 0) == 2
						&& jvm2.waitingThreads().getOrDefault(key + " (read)", 0) == 2);
		Conditions.await("a reader of the other JVM to find the key busy while listening", Duration.ofSeconds(10),
				() -> busy.get() > 0);
		writer.release();
		assertThat(allIn.await(20, TimeUnit.SECONDS)).as("all four readers hold at once").isTrue();
		leave.countDown();
		CompletableFuture.allOf(readers).get(20, TimeUnit.SECONDS);
	}

	/**
	 * Readers keep coming, each overlapping the next, so the key never falls free of
	 * readers; the waiting writer still gets it, because its intent holds new readers
	 * back from its first attempt on (the block-reserving one, with local hand-over), and
	 * the last reader's release wakes it. Its retry interval is the templates' minute: a
	 * writer whose first attempt recorded no intent would run out of its 10 s.
	 */
	@Test
	@DisplayName("A writer is not starved by a stream of overlapping readers (Redisson #5379)")
	void aWriterIsNotStarvedByAStreamOfOverlappingReaders() throws Exception {
		String key = key();
		DefaultLockTemplate readersJvm = this.templates.template(provider(), LONG_LEASE);
		DefaultLockTemplate writerJvm = this.templates.template(otherProvider(), LONG_LEASE);
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger reads = new AtomicInteger();
		Lease first = readersJvm.acquire(key, READ);
		CompletableFuture<Void> stream = CompletableFuture.runAsync(() -> {
			Lease previous = first;
			while (!stop.get()) {
				var next = readersJvm.tryAcquire(key,
						LockOptions.builder().mode(LockMode.READ).waitTime(Duration.ofMillis(50)).build());
				previous.release();
				if (next.isEmpty()) {
					// Held back by the writer: wait behind it as any reader would.
					next = readersJvm.tryAcquire(key, READ);
				}
				previous = next.orElseThrow();
				reads.incrementAndGet();
			}
			previous.release();
		}, TestThreads.EACH);
		Conditions.await("a few overlapping reads", Duration.ofSeconds(10), () -> reads.get() >= 3);
		// 10 s, not the templates' 45: a writer that records its intent only at its
		// next retry (a minute away) runs out of it instead of passing late. Its JVM
		// listens on the key first, so that its first pause is that retry interval,
		// not the short backoff of a waiter whose subscription is still starting.
		try (ReleaseSignals.Subscription listening = listening(otherProvider(), key);
				Lease writer = writerJvm.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(10)).build())) {
			assertThat(writer.isHeld()).isTrue();
		}
		finally {
			stop.set(true);
		}
		stream.get(20, TimeUnit.SECONDS);
	}

	/**
	 * {@code provider}'s subscription to the releases of {@code key}, listening when it
	 * returns (a Redis cluster's sharded signals start per slot), on a store with local
	 * hand-over, whose waiters of one JVM share its signals; nothing elsewhere (a
	 * ZooKeeper waiter watches a node of its own).
	 */
	private static ReleaseSignals.Subscription listening(LockProvider provider, String key) {
		ReleaseSignals signals = signals(provider);
		if (!(provider instanceof LocalHandover) || signals == ReleaseSignals.NONE) {
			return () -> {
			};
		}
		ReleaseSignals.Subscription subscription = signals.subscribe(key, () -> {
		});
		Conditions.await("the writer's JVM to listen on the key", Duration.ofSeconds(10),
				() -> signals.isListening(key));
		return subscription;
	}

	/**
	 * The release signals of {@code provider}; {@link ReleaseSignals#NONE} for a store
	 * whose waiters poll (a store may signal on one database and not on another).
	 */
	private static ReleaseSignals signals(LockProvider provider) {
		return (provider instanceof ReleaseSignalling signalling) ? signalling.releaseSignals() : ReleaseSignals.NONE;
	}

	@Test
	void aWriterReadingUnderItsLockReEntersIt() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		jvm.run(key, () -> {
			long token = LockContext.current().orElseThrow().fencingToken();
			jvm.run(key, READ,
					() -> assertThat(LockContext.current().orElseThrow().fencingToken())
						.as("the read re-enters the write lock")
						.isEqualTo(token));
		});
	}

	@Test
	void aReaderReadingAgainReEntersItsHoldEvenWithAWriterWaiting() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		jvm.run(key, READ, () -> {
			long token = LockContext.current().orElseThrow().fencingToken();
			assertBusy("writer", LockAttempt.join(otherProvider().tryLock(
					LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true))));
			jvm.run(key, READ, () -> assertThat(LockContext.current().orElseThrow().fencingToken()).isEqualTo(token));
			otherProvider()
				.withdraw(LockRequest.exclusive(key, LONG_LEASE).withWriter("w1", LONG_LEASE).withIntentRecorded(true));
		});
	}

	@Test
	void aReaderAskingToWriteIsRefused() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		jvm.run(key, READ, () -> assertThatIllegalStateException().isThrownBy(() -> jvm.run(key, () -> {
		})).withMessageContaining("upgrading is not supported"));
		assertThat(jvm.heldLocks()).isZero();
	}

	@Test
	void theLossOfAReadHoldIsNotSilent() {
		String key = key();
		DefaultLockTemplate jvm = this.templates.template(provider(), LONG_LEASE);
		Lease lease = jvm.acquire(key,
				LockOptions.builder().mode(LockMode.READ).leaseTime(SHORT_LEASE).autoRenew(false).build());
		Conditions.await("the unrenewed read lease to run out", SHORT_LEASE.plusSeconds(5), () -> !lease.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
	}

	@Test
	@Tag("slow")
	void theWatchdogKeepsAReadHoldPastItsLease() {
		String key = key();
		// A second, not less: a loaded machine must not make the watchdog look late.
		DefaultLockTemplate jvm = this.templates.template(provider(), Duration.ofSeconds(1));
		Lease lease = jvm.acquire(key, READ);
		long until = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		Conditions.await("three leases to pass", Duration.ofSeconds(10), () -> System.nanoTime() - until > 0);
		assertThat(lease.isHeld()).isTrue();
		assertBusy("writer while the renewed reader holds",
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		lease.release();
	}

}
