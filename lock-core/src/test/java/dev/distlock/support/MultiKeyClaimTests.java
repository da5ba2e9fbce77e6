package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.FutureTask;

import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two multi-key waits of one JVM on overlapping keys: while one has an attempt on the
 * wire, the other does not ask the store, and learns from that attempt's answer which key
 * to wait for.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MultiKeyClaimTests {

	private final InMemoryLockProvider memory = new InMemoryLockProvider();

	private final HeldProvider store = new HeldProvider(this.memory);

	@AutoClose
	private final Closing closing = new Closing();

	private DefaultLockTemplate template(LockOptions options) {
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, this.closing.scheduler(), options);
		this.closing.add(template);
		return template;
	}

	/**
	 * Far longer than the test waits for a turned-away wait: only a release signal, or
	 * the answer of the attempt that turned it away, lets it in.
	 */
	private final LockOptions patient = LockOptions.builder()
		.waitTime(Duration.ofMinutes(2))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMinutes(5))
		.build();

	private final String prefix = UUID.randomUUID() + "-";

	private final DefaultLockTemplate elsewhere = template(this.patient);

	private final DefaultLockTemplate here = template(this.patient);

	@Test
	void aWaitTurnedAwayByAnotherAttemptIsWokenByTheBusyKeysRelease() throws Exception {
		String shared = key("a");
		String heldElsewhere = key("b");
		String own = key("c");
		MultiLease sharedHold = this.elsewhere.acquireAll(List.of(shared), LockOptions.defaults());
		MultiLease otherHold = this.elsewhere.acquireAll(List.of(heldElsewhere), LockOptions.defaults());
		FutureTask<MultiLease> first = start(List.of(shared, heldElsewhere));
		CompletableFuture<LockAttempt> firstAnswer = this.store.heldBack.get(10, TimeUnit.SECONDS);
		FutureTask<MultiLease> second = startTurnedAway(List.of(shared, own));
		firstAnswer.complete(LockAttempt.join(this.memory.tryLock(this.store.heldRequest)));
		sharedHold.release();
		MultiLease secondLease = second.get(20, TimeUnit.SECONDS);
		assertThat(secondLease.keys()).containsExactly(shared, own);
		secondLease.release();
		otherHold.release();
		first.get(20, TimeUnit.SECONDS).release();
	}

	@Test
	void aWaitTurnedAwayByAnAttemptBusyOnAKeyItDoesNotNeedAsksAtOnce() throws Exception {
		String heldElsewhere = key("a");
		String shared = key("b");
		String own = key("c");
		MultiLease otherHold = this.elsewhere.acquireAll(List.of(heldElsewhere), LockOptions.defaults());
		FutureTask<MultiLease> first = start(List.of(heldElsewhere, shared));
		CompletableFuture<LockAttempt> firstAnswer = this.store.heldBack.get(10, TimeUnit.SECONDS);
		FutureTask<MultiLease> second = startTurnedAway(List.of(shared, own));
		firstAnswer.complete(LockAttempt.join(this.memory.tryLock(this.store.heldRequest)));
		MultiLease secondLease = second.get(20, TimeUnit.SECONDS);
		assertThat(secondLease.keys()).containsExactly(shared, own);
		secondLease.release();
		otherHold.release();
		first.get(20, TimeUnit.SECONDS).release();
	}

	private String key(String suffix) {
		return this.prefix + suffix;
	}

	/** A wait for {@code keys} whose first attempt the store holds back. */
	private FutureTask<MultiLease> start(List<String> keys) {
		this.store.holdBack = keys.get(keys.size() - 1);
		return start(() -> this.here.acquireAll(keys, this.patient));
	}

	/**
	 * A wait for {@code keys}, once it pauses without asking the store, turned away by
	 * the attempt held back.
	 */
	private FutureTask<MultiLease> startTurnedAway(List<String> keys) {
		FutureTask<MultiLease> task = start(() -> this.here.acquireAll(keys, this.patient));
		Thread thread = this.threads.get(this.threads.size() - 1);
		while (thread.getState() != Thread.State.TIMED_WAITING && thread.getState() != Thread.State.WAITING) {
			Thread.onSpinWait();
		}
		assertThat(this.store.asked).as("the store, while another attempt is on the wire")
			.noneMatch((asked) -> asked.containsAll(keys));
		return task;
	}

	private final List<Thread> threads = new CopyOnWriteArrayList<>();

	private <T> FutureTask<T> start(Callable<T> work) {
		FutureTask<T> task = new FutureTask<>(work);
		Thread thread = new Thread(task, "multi-key-claim-" + this.threads.size());
		thread.setDaemon(true);
		this.threads.add(thread);
		thread.start();
		return task;
	}

	/** The in-memory store, holding back the answer to one multi-key attempt. */
	private static final class HeldProvider extends SignallingMemory {

		/** The next multi-key attempt whose keys include this one is held back. */
		volatile @Nullable String holdBack;

		volatile @Nullable LockRequest heldRequest;

		/** The answer of the attempt held back, for the test to complete. */
		final CompletableFuture<CompletableFuture<LockAttempt>> heldBack = new CompletableFuture<>();

		/** The keys of every multi-key attempt. */
		final List<List<String>> asked = new CopyOnWriteArrayList<>();

		HeldProvider(InMemoryLockProvider store) {
			super(store);
		}

		@Override
		public CompletionStage<LockAttempt> tryLock(LockRequest request) {
			if (request.kind() != LockKind.MULTI) {
				return this.store.tryLock(request);
			}
			this.asked.add(request.keys());
			String key = this.holdBack;
			if (key != null && request.keys().contains(key)) {
				this.holdBack = null;
				this.heldRequest = request;
				CompletableFuture<LockAttempt> answer = new CompletableFuture<>();
				this.heldBack.complete(answer);
				return answer;
			}
			return this.store.tryLock(request);
		}

	}

}
