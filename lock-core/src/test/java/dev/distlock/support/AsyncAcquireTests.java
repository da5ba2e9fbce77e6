package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.CallThreads;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DefaultLockTemplate#acquireAsync} on the in-memory store: no hop on the
 * uncontended path, a cancelled wait leaves the line and the store's queue, and store
 * calls run on the template's workers, never on the scheduler's thread that times every
 * waiter's pauses.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AsyncAcquireTests {

	/** A wait that polls only once a minute: what wakes it is a signal. */
	private static final LockOptions PATIENT = LockOptions.builder()
		.waitTime(Duration.ofMinutes(1))
		.retryInterval(Duration.ofMinutes(1))
		.build();

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	private final DefaultLockTemplate template = template(this.store);

	private final DefaultLockTemplate other = template(this.store);

	private DefaultLockTemplate template(LockProvider provider) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		this.closing.add(template);
		return template;
	}

	private static String key() {
		return "async-" + UUID.randomUUID();
	}

	/** The store is asked on the calling thread, and its answer completes the future. */
	@Test
	void anUncontendedAcquireCompletesOnTheCallingThread() throws Exception {
		ThreadRecordingProvider recording = new ThreadRecordingProvider(this.store);
		DefaultLockTemplate template = template(recording);
		CompletableFuture<Optional<Lease>> acquired = template.acquireAsync(key(), LockOptions.defaults());
		assertThat(acquired).isDone();
		assertThat(recording.threads).containsExactly(Thread.currentThread().getName());
		acquired.get().orElseThrow().release();
		assertThat(template.heldLocks()).isZero();
	}

	/**
	 * One fair waiter at the front of the line, queued in the store, one behind it: both
	 * cancelled, both leave the line, and the front one's place in the store's queue is
	 * given up at once rather than left to lapse (after three retry intervals, here three
	 * minutes).
	 */
	@Test
	void aCancelledWaitLeavesTheLineAndTheStoresQueue() throws Exception {
		String key = key();
		LockOptions fair = LockOptions.builder()
			.fair(true)
			.waitTime(Duration.ofMinutes(1))
			.retryInterval(Duration.ofMinutes(1))
			.build();
		Lease held = this.template.acquire(key, fair);
		CompletableFuture<Optional<Lease>> front = this.other.acquireAsync(key, fair);
		CompletableFuture<Optional<Lease>> behind = this.other.acquireAsync(key, fair);
		Await.until("the front waiter queued", Duration.ofSeconds(10), () -> this.store.queueLength(key) == 1);
		assertThat(this.other.waitingThreads()).containsEntry(key, 2);
		behind.cancel(false);
		front.cancel(false);
		Await.until("both left the line", Duration.ofSeconds(10), () -> this.other.queuedKeys() == 0);
		Await.until("the place in the store's queue given up", Duration.ofSeconds(10),
				() -> this.store.queueLength(key) == 0);
		held.release();
		assertThat(this.other.heldLocks()).isZero();
		assertThat(this.store.storedKeys()).isZero();
	}

	/**
	 * A multi-key wait holds no thread either: it takes all its keys once the one held
	 * elsewhere is released, and none before.
	 */
	@Test
	void aMultiKeyWaitTakesAllKeysOnceTheLastIsReleased() throws Exception {
		String key = key();
		List<String> keys = List.of(key + "-a", key + "-b", key + "-c");
		Lease held = this.template.acquire(keys.get(1), LockOptions.defaults());
		CompletableFuture<Optional<MultiLease>> all = this.other.acquireAllAsync(keys, LockOptions.defaults());
		assertThat(all).isNotDone();
		assertThat(this.other.heldLocks()).isZero();
		held.release();
		MultiLease lease = all.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(this.other.heldLocks()).isEqualTo(3);
		lease.release();
		assertThat(this.store.storedKeys()).isZero();
	}

	/**
	 * Two multi-key waits of one JVM on overlapping keys ask the store one at a time:
	 * while the first one's attempt is on the wire, the second waits for its answer
	 * instead of failing in the store, then for the first one's release.
	 */
	@Test
	void overlappingMultiKeyWaitsOfOneJvmAskTheStoreOneAtATime() throws Exception {
		HeldBackProvider heldBack = new HeldBackProvider(this.store);
		DefaultLockTemplate template = template(heldBack);
		String key = key();
		CompletableFuture<Optional<MultiLease>> first = template.acquireAllAsync(List.of(key + "-a", key + "-b"),
				PATIENT);
		CompletableFuture<Optional<MultiLease>> second = template.acquireAllAsync(List.of(key + "-b", key + "-c"),
				PATIENT);
		assertThat(heldBack.attempts).hasValue(1);
		heldBack.answer();
		MultiLease firstLease = first.get(10, TimeUnit.SECONDS).orElseThrow();
		assertThat(second).isNotDone();
		firstLease.release();
		second.get(10, TimeUnit.SECONDS).orElseThrow().release();
		assertThat(heldBack.attempts).hasValue(2);
		assertThat(heldBack.busy).hasValue(0);
		assertThat(this.store.storedKeys()).isZero();
	}

	/**
	 * A multi-key wait that starts while this JVM's release of one of its keys is still
	 * on its way to the store waits for that release to end, rather than asking the store
	 * and being told busy.
	 */
	@Test
	void aMultiKeyWaitWaitsForAReleaseOfThisJvmStillOnItsWayToTheStore() throws Exception {
		String key = key();
		HeldBackProvider slow = new HeldBackProvider(this.store, key + "-b");
		slow.answer();
		DefaultLockTemplate template = template(slow);
		MultiLease first = template.acquireAllAsync(List.of(key + "-a", key + "-b"), PATIENT)
			.get(10, TimeUnit.SECONDS)
			.orElseThrow();
		FutureTask<Void> releasing = new FutureTask<>(first::release, null);
		new Thread(releasing, "releasing").start();
		slow.releaseStarted.get(10, TimeUnit.SECONDS);
		CompletableFuture<Optional<MultiLease>> second = template.acquireAllAsync(List.of(key + "-b", key + "-c"),
				PATIENT);
		assertThat(slow.attempts).hasValue(1);
		slow.letReleaseGo.complete(null);
		releasing.get(10, TimeUnit.SECONDS);
		second.get(10, TimeUnit.SECONDS).orElseThrow().release();
		assertThat(slow.attempts).hasValue(2);
		assertThat(slow.busy).hasValue(0);
	}

	/**
	 * A multi-key wait for a key held elsewhere asks the store, subscribes to the key's
	 * releases and asks once more, then waits for the release: a busy answer wakes no
	 * wait of this JVM, its own included.
	 */
	@Test
	void aBusyMultiKeyWaitAsksTheStoreAgainOnlyOnTheRelease() throws Exception {
		HeldBackProvider counting = new HeldBackProvider(this.store);
		counting.answer();
		DefaultLockTemplate template = template(counting);
		String key = key();
		Lease held = this.other.acquire(key + "-b", LockOptions.defaults());
		CompletableFuture<Optional<MultiLease>> all = template.acquireAllAsync(List.of(key + "-a", key + "-b"),
				PATIENT);
		assertThat(counting.attempts).hasValue(2);
		held.release();
		all.get(10, TimeUnit.SECONDS).orElseThrow().release();
		assertThat(counting.attempts).hasValue(3);
		assertThat(counting.busy).hasValue(2);
	}

	/**
	 * A store without release signals: the waiter polls, each pause timed by the
	 * scheduler, and each attempt after the first runs on a worker of the template.
	 */
	@Test
	void storeCallsOfAPollingWaitRunOnWorkersNeverOnTheSchedulersThread() throws Exception {
		ThreadRecordingProvider recording = new ThreadRecordingProvider(this.store);
		DefaultLockTemplate polling = template(recording);
		String key = key();
		Lease held = this.template.acquire(key, LockOptions.defaults());
		CompletableFuture<Optional<Lease>> waiting = polling.acquireAsync(key, LockOptions.defaults());
		Await.until("a few attempts", Duration.ofSeconds(10), () -> recording.threads.size() >= 4);
		held.release();
		waiting.get(10, TimeUnit.SECONDS).orElseThrow().release();
		List<String> later = recording.threads.subList(1, recording.threads.size());
		assertThat(later).allSatisfy((thread) -> assertThat(thread).startsWith("distlock-wait-"));
	}

	/**
	 * A store whose calls block gives threads of its own: every attempt of a wait that
	 * holds no thread runs there, the first one included, while a blocking caller's
	 * attempts run on the caller's thread.
	 */
	@Test
	void aStoreWhoseCallsBlockIsAskedOnItsOwnThreadsForWaitsThatHoldNone() throws Exception {
		try (CallThreads calls = new CallThreads("store-call-", 1)) {
			ThreadRecordingProvider recording = new ThreadRecordingProvider(this.store, calls);
			DefaultLockTemplate template = template(recording);
			String key = key();
			Lease held = this.template.acquire(key, LockOptions.defaults());
			CompletableFuture<Optional<Lease>> waiting = template.acquireAsync(key, LockOptions.defaults());
			Await.until("a busy attempt", Duration.ofSeconds(10), () -> recording.busy.get() > 0);
			held.release();
			waiting.get(10, TimeUnit.SECONDS).orElseThrow().release();
			List<String> keys = List.of(key + "-a", key + "-b");
			template.acquireAllAsync(keys, LockOptions.defaults()).get(10, TimeUnit.SECONDS).orElseThrow().release();
			assertThat(recording.threads).hasSizeGreaterThanOrEqualTo(3)
				.allSatisfy((thread) -> assertThat(thread).startsWith("store-call-"));
			recording.threads.clear();
			template.acquire(key, LockOptions.defaults()).release();
			assertThat(recording.threads).containsExactly(Thread.currentThread().getName());
		}
	}

	/**
	 * Once the store's threads are gone, a wait that holds no thread fails, naming it.
	 */
	@Test
	void aWaitFailsOnceTheStoresThreadsAreClosed() {
		CallThreads calls = new CallThreads("store-call-", 1);
		DefaultLockTemplate template = template(new ThreadRecordingProvider(this.store, calls));
		calls.close();
		assertThat(template.acquireAsync(key(), LockOptions.defaults())).failsWithin(Duration.ofSeconds(10))
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(LockBackendException.class)
			.withMessageContaining("store has been closed");
	}

	/**
	 * The in-memory store with its release signals, counting multi-key attempts and busy
	 * answers. It holds back its answer to the first multi-key attempt until told, as a
	 * slow network would, and, given a key, that key's release until told.
	 */
	private static final class HeldBackProvider extends SignallingMemory {

		final AtomicInteger attempts = new AtomicInteger();

		final AtomicInteger busy = new AtomicInteger();

		final CompletableFuture<Void> releaseStarted = new CompletableFuture<>();

		final CompletableFuture<Void> letReleaseGo = new CompletableFuture<>();

		private final CompletableFuture<Void> released = new CompletableFuture<>();

		private final @Nullable String slowKey;

		HeldBackProvider(InMemoryLockProvider store) {
			this(store, null);
		}

		HeldBackProvider(InMemoryLockProvider store, @Nullable String slowKey) {
			super(store);
			this.slowKey = slowKey;
		}

		/** Lets the first multi-key attempt reach the store. */
		void answer() {
			this.released.complete(null);
		}

		@Override
		public CompletionStage<LockAttempt> tryLock(LockRequest request) {
			boolean first = request.kind() == LockKind.MULTI && this.attempts.incrementAndGet() == 1;
			CompletionStage<Void> go = first ? this.released : CompletableFuture.completedFuture(null);
			return go.thenCompose((ignored) -> this.store.tryLock(request)).thenApply((attempt) -> {
				if (attempt instanceof LockAttempt.Busy) {
					this.busy.incrementAndGet();
				}
				return (attempt instanceof LockAttempt.AcquiredAll all)
						? new LockAttempt.AcquiredAll(all.handles().stream().map(this::slowed).toList()) : attempt;
			});
		}

		private LockHandle slowed(LockHandle handle) {
			if (!handle.key().equals(this.slowKey)) {
				return handle;
			}
			return new DelegatingHandle(handle) {

				@Override
				public boolean release() {
					HeldBackProvider.this.releaseStarted.complete(null);
					HeldBackProvider.this.letReleaseGo.join();
					return super.release();
				}

			};
		}

	}

	/** The in-memory store through the bare SPI, noting the thread of every attempt. */
	private static final class ThreadRecordingProvider implements LockProvider {

		private final InMemoryLockProvider store;

		final List<String> threads = new CopyOnWriteArrayList<>();

		/** Attempts the store answered busy. */
		final AtomicInteger busy = new AtomicInteger();

		private final @Nullable Executor calls;

		ThreadRecordingProvider(InMemoryLockProvider store) {
			this(store, null);
		}

		ThreadRecordingProvider(InMemoryLockProvider store, @Nullable Executor calls) {
			this.store = store;
			this.calls = calls;
		}

		@Override
		public Optional<Executor> callExecutor() {
			return Optional.ofNullable(this.calls);
		}

		@Override
		public Set<LockKind> kinds() {
			return this.store.kinds();
		}

		@Override
		public CompletionStage<LockAttempt> tryLock(LockRequest request) {
			this.threads.add(Thread.currentThread().getName());
			return this.store.tryLock(request).whenComplete((attempt, failure) -> {
				if (attempt instanceof LockAttempt.Busy) {
					this.busy.incrementAndGet();
				}
			});
		}

	}

}
