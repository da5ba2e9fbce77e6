package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * How waiters wait, on the in-memory store: woken by a release rather than by polling,
 * woken at the holder's deadline when its lease runs out, in arrival order, fairly across
 * JVMs with a fair lock, and leaving nothing behind when interrupted. Three templates on
 * one store stand for three JVMs on one Redis.
 *
 * <p>
 * The retry interval is a minute unless a test is about it, so that a waiter that polled
 * instead of being woken would fail the test by timing out.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InMemoryWaitingTests {

	private static final Duration RETRY = Duration.ofMinutes(1);

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	private final List<DefaultLockTemplate> jvms = List.of(template(RETRY), template(RETRY), template(RETRY));

	private final DefaultLockTemplate template = this.jvms.get(0);

	private final DefaultLockTemplate other = this.jvms.get(1);

	private DefaultLockTemplate template(Duration retryInterval) {
		return template(this.store, retryInterval);
	}

	private DefaultLockTemplate template(LockProvider provider, Duration retryInterval) {
		RenewalScheduler scheduler = this.closing.scheduler();
		return new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(20))
					.leaseTime(Duration.ofMinutes(1))
					.autoRenew(true)
					.retryInterval(retryInterval)
					.build());
	}

	private static String key() {
		return "waiting-" + UUID.randomUUID();
	}

	/**
	 * The holder's lease and the waiter's retry interval are a minute: only the release
	 * signal can hand the lock over within the test's bound.
	 */
	@Test
	void aWaiterInAnotherJvmIsWokenByTheRelease() throws Exception {
		for (int i = 0; i < 5; i++) {
			String key = key();
			Lease held = this.template.acquire(key, LockOptions.defaults());
			Waiter<Long> waiter = Waiter.start("waiter-" + i, () -> {
				try (Lease lease = this.other.acquire(key, LockOptions.defaults())) {
					return lease.fencingToken();
				}
			});
			Await.parked(waiter.thread);
			held.release();
			assertThat(waiter.result.get(5, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
		}
		assertThat(this.store.storedKeys()).as("keys (and subscriptions) left").isZero();
	}

	@Test
	void aWaiterInTheSameJvmIsWokenByTheRelease() throws Exception {
		String key = key();
		Lease held = this.template.acquire(key, LockOptions.defaults());
		Waiter<Long> waiter = Waiter.start("local-waiter", () -> {
			try (Lease lease = this.template.acquire(key, LockOptions.defaults())) {
				return lease.fencingToken();
			}
		});
		Await.parked(waiter.thread);
		held.release();
		assertThat(waiter.result.get(5, TimeUnit.SECONDS)).isGreaterThan(held.fencingToken());
	}

	/**
	 * Nobody signals an expiry: a waiter of the same JVM never sleeps past the holder's
	 * deadline, however long its retry interval.
	 */
	@Test
	void aLocalWaiterTakesTheLockWhenTheHoldersUnrenewedLeaseRunsOut() throws Exception {
		assertTheLockPassesWhenTheLeaseRunsOut(this.template);
	}

	/**
	 * A waiter of another JVM sleeps no longer than the remaining lease the store
	 * reports.
	 */
	@Test
	void aWaiterInAnotherJvmTakesTheLockWhenTheHoldersUnrenewedLeaseRunsOut() throws Exception {
		assertTheLockPassesWhenTheLeaseRunsOut(this.other);
	}

	private void assertTheLockPassesWhenTheLeaseRunsOut(DefaultLockTemplate waiting) throws Exception {
		String key = key();
		Lease holder = this.template.acquire(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(300)).autoRenew(false).build());
		long start = System.nanoTime();
		Waiter<Lease> waiter = Waiter.start("patient-waiter", () -> waiting.acquire(key, LockOptions.defaults()));
		Lease next = waiter.result.get(10, TimeUnit.SECONDS);
		assertThat(Duration.ofNanos(System.nanoTime() - start))
			.as("the wait for a lease of 300ms, with a retry interval of 1m")
			.isLessThan(Duration.ofSeconds(5));
		assertThat(next.fencingToken()).isGreaterThan(holder.fencingToken());
		assertThat(holder.isHeld()).isFalse();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(holder::release);
		next.release();
	}

	@Test
	void waitingEndsAfterTheWaitTime() {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		Duration waitTime = Duration.ofMillis(200);
		LockOptions options = LockOptions.builder().waitTime(waitTime).build();
		assertThat(this.template.tryAcquire(key, options)).isEmpty();
		assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> this.template.acquire(key, options))
			.withMessageContaining(key)
			.satisfies((ex) -> assertThat(ex.getWaitTime()).isEqualTo(waitTime));
		held.release();
	}

	@Test
	void anInterruptedWaiterStopsWaitingKeepsItsFlagAndLeavesNothingBehind() throws Exception {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		Waiter<Boolean> waiter = Waiter.start("interrupted-waiter", () -> {
			try {
				this.template.acquire(key, LockOptions.defaults());
				return false;
			}
			catch (LockAcquisitionException ex) {
				assertThat(ex).hasMessageContaining("Interrupted");
				return Thread.currentThread().isInterrupted();
			}
		});
		Await.parked(waiter.thread);
		waiter.thread.interrupt();
		assertThat(waiter.result.get(5, TimeUnit.SECONDS)).as("interrupt flag restored").isTrue();
		assertThat(this.template.queuedKeys()).as("local queues left").isZero();
		held.release();
		assertThat(this.store.storedKeys()).as("keys (and subscriptions) left").isZero();
	}

	/**
	 * Threads of one JVM line up locally, in arrival order: only the first talks to the
	 * store.
	 */
	@Test
	void threadsOfOneJvmTakeTheLockInTheOrderTheyArrived() throws Exception {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		List<String> order = new CopyOnWriteArrayList<>();
		List<Waiter<Void>> waiters = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			String name = "arrival-" + i;
			Waiter<Void> waiter = Waiter.start(name, () -> {
				try (Lease lease = this.template.acquire(key, LockOptions.defaults())) {
					order.add(name);
				}
				return null;
			});
			Await.parked(waiter.thread);
			waiters.add(waiter);
		}
		held.release();
		for (Waiter<Void> waiter : waiters) {
			waiter.result.get(10, TimeUnit.SECONDS);
		}
		assertThat(order).containsExactly("arrival-0", "arrival-1", "arrival-2", "arrival-3", "arrival-4");
		assertThat(this.template.queuedKeys()).isZero();
	}

	/**
	 * Readers hold together, so readers of one JVM do not line up locally behind each
	 * other's store call: both are at the store at once. A store that lets a reader
	 * through only when another reader is asking too fails the acquire of a reader left
	 * alone there.
	 */
	@Test
	void readersOfOneJvmGoToTheStoreTogether() throws Exception {
		String key = key();
		CountDownLatch atStore = new CountDownLatch(2);
		LockProvider meeting = new LockProvider() {

			@Override
			public CompletionStage<LockAttempt> tryLock(LockRequest request) {
				if (request.kind() == LockKind.SHARED) {
					atStore.countDown();
					try {
						if (!atStore.await(10, TimeUnit.SECONDS)) {
							return CompletableFuture.failedFuture(new IllegalStateException("alone at the store"));
						}
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return CompletableFuture.failedFuture(ex);
					}
				}
				return InMemoryWaitingTests.this.store.tryLock(request);
			}

			@Override
			public Set<LockKind> kinds() {
				return InMemoryWaitingTests.this.store.kinds();
			}

		};
		DefaultLockTemplate jvm = template(meeting, RETRY);
		List<Waiter<Long>> readers = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			readers.add(Waiter.start("reader-" + i, () -> {
				try (Lease lease = jvm.acquire(key, LockOptions.builder().mode(LockMode.READ).build())) {
					return lease.fencingToken();
				}
			}));
		}
		for (Waiter<Long> reader : readers) {
			assertThat(reader.result.get(20, TimeUnit.SECONDS)).isPositive();
		}
	}

	/**
	 * Readers waiting together on a key make one fallback poll between them, not one
	 * each: only the one that has waited longest polls, and when it gets in the others
	 * follow at once, while it still holds. The store here sends no signals, so every
	 * look is a poll.
	 */
	@Test
	void readersWaitingTogetherPollThroughTheOneThatWaitedLongest() throws Exception {
		String key = key();
		Map<String, AtomicInteger> looks = new ConcurrentHashMap<>();
		LockProvider unsignalled = new LockProvider() {

			@Override
			public CompletionStage<LockAttempt> tryLock(LockRequest request) {
				if (request.kind() == LockKind.SHARED) {
					looks.computeIfAbsent(Thread.currentThread().getName(), (name) -> new AtomicInteger())
						.incrementAndGet();
				}
				return InMemoryWaitingTests.this.store.tryLock(request);
			}

			@Override
			public Set<LockKind> kinds() {
				return InMemoryWaitingTests.this.store.kinds();
			}

		};
		DefaultLockTemplate jvm = template(unsignalled, Duration.ofMillis(20));
		Lease writer = this.other.acquire(key, LockOptions.defaults());
		CountDownLatch allIn = new CountDownLatch(4);
		List<Waiter<Long>> readers = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			String name = "reader-" + i;
			readers.add(Waiter.start(name, () -> {
				try (Lease lease = jvm.acquire(key, LockOptions.builder().mode(LockMode.READ).build())) {
					allIn.countDown();
					assertThat(allIn.await(10, TimeUnit.SECONDS)).as("every reader in together").isTrue();
					return lease.fencingToken();
				}
			}));
			Await.until(name + " to look once", Duration.ofSeconds(10), () -> looks.containsKey(name));
		}
		Await.until("the first reader to poll five times", Duration.ofSeconds(10),
				() -> looks.get("reader-0").get() > 5);
		for (int i = 1; i < 4; i++) {
			assertThat(looks.get("reader-" + i)).as("looks of reader-" + i).hasValue(1);
		}
		writer.release();
		for (Waiter<Long> reader : readers) {
			assertThat(reader.result.get(10, TimeUnit.SECONDS)).isGreaterThan(writer.fencingToken());
		}
	}

	/**
	 * Fair waiters of three JVMs take the lock in the order they queued, although the
	 * releasing JVM's own waiter, asking last, would otherwise be woken first.
	 */
	@Test
	void fairWaitersOfSeveralJvmsTakeTheLockInTheOrderTheyQueued() throws Exception {
		for (int round = 0; round < 3; round++) {
			String key = key();
			Lease held = this.jvms.get(0).acquire(key, fair());
			List<String> taken = new CopyOnWriteArrayList<>();
			List<Waiter<Void>> waiters = new ArrayList<>();
			int[] order = { 1, 2, 0 };
			for (int i = 0; i < order.length; i++) {
				String name = "jvm" + order[i];
				DefaultLockTemplate jvm = this.jvms.get(order[i]);
				waiters.add(Waiter.start(name, () -> {
					try (Lease lease = jvm.acquire(key, fair())) {
						taken.add(name);
					}
					return null;
				}));
				int queued = i + 1;
				Await.until("waiter " + queued + " queued", Duration.ofSeconds(10),
						() -> this.store.queueLength(key) == queued);
			}
			held.release();
			for (Waiter<Void> waiter : waiters) {
				waiter.result.get(10, TimeUnit.SECONDS);
			}
			assertThat(taken).as("round %d", round).containsExactly("jvm1", "jvm2", "jvm0");
			assertThat(this.store.storedKeys()).as("keys left").isZero();
		}
	}

	@Test
	void aFairWaiterThatDiedHoldsUpTheQueueOnlyUntilItsPlaceLapses() throws Exception {
		String key = key();
		Lease held = this.template.acquire(key, fair());
		// A waiter that queued once and died: nobody refreshes its place.
		assertThat(LockAttempt
			.join(this.store.tryLock(LockRequest.fair(key, Duration.ofSeconds(30), "ghost", Duration.ofSeconds(1)))))
			.isInstanceOf(LockAttempt.Busy.class);
		Waiter<Long> waiter = Waiter.start("live-waiter", () -> {
			try (Lease lease = this.other.acquire(key, fair())) {
				return System.nanoTime();
			}
		});
		Await.until("the live waiter queued behind the dead one", Duration.ofSeconds(10),
				() -> this.store.queueLength(key) == 2);
		long released = System.nanoTime();
		held.release();
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(waiter.result.get(10, TimeUnit.SECONDS) - released);
		assertThat(waitedMillis).as("wait behind a dead waiter whose place is kept 1s").isLessThan(5000);
		assertThat(this.store.storedKeys()).isZero();
	}

	@Test
	void aFairWaiterThatGivesUpLeavesTheQueueAtOnce() {
		String key = key();
		Lease held = this.template.acquire(key, fair());
		assertThat(
				this.other.tryAcquire(key, LockOptions.builder().fair(true).waitTime(Duration.ofMillis(100)).build()))
			.isEmpty();
		// Left in the background (the caller has its answer), well before its place would
		// lapse.
		Await.until("the waiter left the queue", Duration.ofSeconds(5), () -> this.store.queueLength(key) == 0);
		held.release();
		assertThat(this.store.storedKeys()).isZero();
	}

	@Test
	void anInterruptedFairWaiterLeavesTheQueue() throws Exception {
		String key = key();
		Lease held = this.template.acquire(key, fair());
		Waiter<Lease> waiter = Waiter.start("interrupted-fair-waiter", () -> this.other.acquire(key, fair()));
		Await.until("the waiter queued", Duration.ofSeconds(10), () -> this.store.queueLength(key) == 1);
		Await.parked(waiter.thread);
		waiter.thread.interrupt();
		assertThat(waiter.result).failsWithin(Duration.ofSeconds(5))
			.withThrowableOfType(ExecutionException.class)
			.withCauseInstanceOf(LockAcquisitionException.class);
		Await.until("the waiter left the queue", Duration.ofSeconds(5), () -> this.store.queueLength(key) == 0);
		assertThat(this.other.queuedKeys()).isZero();
		held.release();
		assertThat(this.store.storedKeys()).isZero();
	}

	private static LockOptions fair() {
		return LockOptions.builder().fair(true).build();
	}

}
