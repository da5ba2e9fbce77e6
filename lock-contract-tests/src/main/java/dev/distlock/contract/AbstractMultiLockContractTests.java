package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What every store with multi-key locks ({@link LockKind#MULTI}) must do, through the
 * store SPI and through the template: all keys or none, sorted and deduplicated, within
 * one wait time; never a part left held after a busy key, a timeout or an interrupt; a
 * fencing token per key that continues the plain lock's; plain locks on each key
 * excluded; a loss reported. A store module extends this class with a provider on a real,
 * running store and a second provider on the same store (as another JVM would have).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractMultiLockContractTests {

	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/**
	 * A provider for the store under test, with multi-key locks; called once per test.
	 */
	protected abstract LockProvider provider();

	/** A second provider on the same store, as another JVM would have. */
	protected abstract LockProvider otherProvider();

	/**
	 * Keys of one test: by default unrelated keys (which may lie in different cluster
	 * slots); a store may override to put them in one slot, or to mix.
	 */
	protected List<String> keys(int count) {
		String prefix = "multi-" + UUID.randomUUID() + "-";
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add(prefix + (char) ('a' + i));
		}
		return keys;
	}

	private TwoTemplates templates;

	@BeforeEach
	void templates() {
		this.templates = new TwoTemplates(provider(), otherProvider());
	}

	@AfterEach
	void closeTemplates() {
		this.templates.close();
	}

	private LockProvider multi() {
		return provider();
	}

	/**
	 * Releases the handles of one multi-key attempt as the store batches it, if it does.
	 */
	private List<Boolean> releaseAll(List<LockHandle> handles) {
		if (provider() instanceof BatchRelease batch) {
			return batch.releaseAll(handles);
		}
		return handles.stream().map(LockHandle::release).toList();
	}

	@Test
	void takesEveryKeyInOneAttemptAndEachExcludesPlainLocks() {
		List<String> keys = keys(3);
		LockAttempt attempt = LockAttempt.join(multi().tryLock(LockRequest.all(keys, LONG_LEASE)));
		assertThat(attempt).isInstanceOf(LockAttempt.AcquiredAll.class);
		List<LockHandle> handles = ((LockAttempt.AcquiredAll) attempt).handles();
		assertThat(handles).extracting(LockHandle::key).containsExactlyElementsOf(keys);
		for (String key : keys) {
			assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)))).as(key)
				.isInstanceOf(LockAttempt.Busy.class);
		}
		assertThat(releaseAll(handles)).containsOnly(true);
		for (String key : keys) {
			assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)))).as(key)
				.isInstanceOf(LockAttempt.Acquired.class);
		}
	}

	@Test
	void aBusyKeyLeavesNoKeyHeld() {
		List<String> keys = keys(3);
		LockHandle middle = acquired(
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(keys.get(1), LONG_LEASE))));
		LockAttempt attempt = LockAttempt.join(multi().tryLock(LockRequest.all(keys, LONG_LEASE).withWaiting(true)));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) attempt).key()).isEqualTo(keys.get(1));
		assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(keys.get(0), LONG_LEASE))))
			.as("key before the busy one")
			.isInstanceOf(LockAttempt.Acquired.class);
		assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(keys.get(2), LONG_LEASE))))
			.as("key after the busy one")
			.isInstanceOf(LockAttempt.Acquired.class);
		assertThat(middle.release()).isTrue();
	}

	@Test
	void eachKeyGetsTheTokenAPlainLockWouldGet() {
		List<String> keys = keys(2);
		LockHandle plain = acquired(
				LockAttempt.join(provider().tryLock(LockRequest.exclusive(keys.get(0), LONG_LEASE))));
		long plainToken = plain.fencingToken();
		plain.release();
		try (MultiLease lease = this.templates.first.acquireAll(keys, LockOptions.defaults())) {
			assertThat(lease.fencingToken(keys.get(0))).isGreaterThan(plainToken);
			assertThat(lease.fencingToken(keys.get(1))).isPositive();
			assertThat(lease.fencingToken()).isEqualTo(lease.fencingToken(keys.get(0)));
			plainToken = lease.fencingToken(keys.get(1));
		}
		LockHandle after = acquired(
				LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(keys.get(1), LONG_LEASE))));
		assertThat(after.fencingToken()).as("a plain lock after the multi-key lock").isGreaterThan(plainToken);
		after.release();
	}

	@Test
	void keysAreDeduplicatedAndSorted() {
		List<String> keys = keys(3);
		List<String> asked = List.of(keys.get(2), keys.get(0), keys.get(2), keys.get(1), keys.get(0));
		try (MultiLease lease = this.templates.first.acquireAll(asked, LockOptions.defaults())) {
			assertThat(lease.keys()).containsExactlyElementsOf(keys);
			assertThat(lease.key()).isEqualTo(String.join(",", keys));
			assertThat(lease.isHeld()).isTrue();
		}
	}

	@Test
	void aTimeoutLeavesNoKeyHeld() {
		List<String> keys = keys(3);
		try (Lease blocker = this.templates.second.acquire(keys.get(2), LockOptions.defaults())) {
			assertThatExceptionOfType(LockAcquisitionException.class)
				.isThrownBy(() -> this.templates.first.acquireAll(keys, TwoTemplates.waiting(Duration.ofMillis(300))))
				.withMessageContaining("none of them is held");
			assertThat(this.templates.first.tryAcquireAll(keys, TwoTemplates.waiting(Duration.ZERO))).isEmpty();
			assertFree(keys.subList(0, 2));
		}
	}

	@Test
	void aWaiterIsWokenWhenTheBusyKeyIsReleased() throws Exception {
		List<String> keys = keys(2);
		Lease blocker = this.templates.second.acquire(keys.get(1), LockOptions.defaults());
		AtomicReference<MultiLease> taken = new AtomicReference<>();
		// Re-checks only every minute: the release's signal is what must wake it.
		DefaultLockTemplate waiting = this.templates.slowRetry(provider());
		Thread waiter = new Thread(
				() -> taken.set(waiting.acquireAll(keys, TwoTemplates.waiting(Duration.ofSeconds(30)))));
		waiter.start();
		Conditions.await("the waiter parks", Duration.ofSeconds(10), () -> parked(waiter));
		assertThat(taken.get()).isNull();
		blocker.release();
		waiter.join(TimeUnit.SECONDS.toMillis(25));
		try (MultiLease lease = taken.get()) {
			assertThat(lease).isNotNull();
			assertThat(lease.isHeld()).isTrue();
			assertThat(lease.fencingToken(keys.get(1))).isGreaterThan(blocker.fencingToken());
		}
	}

	private static boolean parked(Thread thread) {
		return thread.getState() == Thread.State.TIMED_WAITING || thread.getState() == Thread.State.WAITING;
	}

	@Test
	@DisplayName("Callers asking for overlapping keys in opposite orders all finish (Redisson #4050 livelocks)")
	void overlappingKeysInOppositeOrdersDoNotLivelock() throws Exception {
		List<String> keys = keys(3);
		int rounds = 30;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				List<String> order = new ArrayList<>(keys);
				if (t % 2 == 1) {
					java.util.Collections.reverse(order);
				}
				DefaultLockTemplate template = (t < 2) ? this.templates.first : this.templates.second;
				done.add(pool.submit(() -> {
					for (int i = 0; i < rounds; i++) {
						template.runAll(order, TwoTemplates.waiting(Duration.ofSeconds(30)), () -> {
							if (inside.incrementAndGet() != 1) {
								overlaps.incrementAndGet();
							}
							inside.decrementAndGet();
						});
					}
				}));
			}
			for (Future<?> future : done) {
				future.get(50, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(overlaps).as("two holders of the same keys at once").hasValue(0);
		assertFree(keys);
	}

	@Test
	@DisplayName("An interrupted waiter leaves no key held (Redisson #4456 leaves partial state)")
	void anInterruptedWaiterLeavesNoKeyHeld() throws Exception {
		List<String> keys = keys(3);
		Lease blocker = this.templates.second.acquire(keys.get(1), LockOptions.defaults());
		AtomicReference<Throwable> failure = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			try {
				this.templates.first.acquireAll(keys, TwoTemplates.waiting(Duration.ofSeconds(30))).release();
			}
			catch (Throwable ex) {
				failure.set(ex);
			}
		});
		waiter.start();
		Conditions.await("the waiter parks", Duration.ofSeconds(10), () -> parked(waiter));
		waiter.interrupt();
		waiter.join(TimeUnit.SECONDS.toMillis(20));
		assertThat(waiter.isAlive()).isFalse();
		assertThat(failure.get()).isInstanceOf(LockAcquisitionException.class)
			.hasMessageContaining("none of them is held");
		assertFree(List.of(keys.get(0), keys.get(2)));
		blocker.release();
		assertFree(keys);
	}

	@Test
	@DisplayName("An interrupt at any moment of a wait, an attempt on the wire included, leaves no key held")
	void anInterruptAtAnyMomentLeavesNoKeyHeld() throws Exception {
		for (int round = 0; round < 20; round++) {
			List<String> keys = keys(3);
			Lease blocker = this.templates.second.acquire(keys.get(1), LockOptions.defaults());
			AtomicReference<Throwable> failure = new AtomicReference<>();
			Thread waiter = new Thread(() -> {
				try {
					this.templates.first.acquireAll(keys, TwoTemplates.waiting(Duration.ofSeconds(30))).release();
				}
				catch (Throwable ex) {
					failure.set(ex);
				}
			});
			waiter.start();
			// Rounds spread the interrupt over the first attempts' round trips.
			TimeUnit.MICROSECONDS.sleep(round * 250L);
			waiter.interrupt();
			waiter.join(TimeUnit.SECONDS.toMillis(20));
			assertThat(waiter.isAlive()).isFalse();
			assertThat(failure.get()).as("round %d", round)
				.isInstanceOf(LockAcquisitionException.class)
				.hasMessageContaining("none of them is held");
			assertFree(List.of(keys.get(0), keys.get(2)));
			blocker.release();
		}
	}

	@Test
	void aPlainLockWaitsForTheMultiKeyLockAndTheOtherWay() {
		List<String> keys = keys(2);
		try (MultiLease lease = this.templates.first.acquireAll(keys, LockOptions.defaults())) {
			assertThat(this.templates.second.tryAcquire(keys.get(0), TwoTemplates.waiting(Duration.ZERO))).isEmpty();
			assertThat(this.templates.first.tryAcquireAll(List.of(keys.get(1), keys(1).get(0)),
					TwoTemplates.waiting(Duration.ZERO)))
				.as("another multi-key lock sharing a key, from this JVM")
				.isEmpty();
		}
		try (Lease plain = this.templates.second.acquire(keys.get(0), LockOptions.defaults())) {
			assertThat(this.templates.first.tryAcquireAll(keys, TwoTemplates.waiting(Duration.ofMillis(100))))
				.isEmpty();
		}
		assertFree(keys);
	}

	@Test
	void keysHeldInScopeAreReentered() {
		List<String> keys = keys(2);
		this.templates.first.run(keys.get(0), () -> {
			long outer = LockContext.current().orElseThrow().fencingToken();
			Optional<MultiLease> lease = this.templates.first.tryAcquireAll(keys, TwoTemplates.waiting(Duration.ZERO));
			assertThat(lease).isPresent();
			assertThat(lease.get().fencingToken(keys.get(0))).isEqualTo(outer);
			lease.get().release();
			assertThat(this.templates.second.tryAcquire(keys.get(0), TwoTemplates.waiting(Duration.ZERO)))
				.as("the outer lock is still held")
				.isEmpty();
		});
		this.templates.first.runAll(keys, LockOptions.defaults(), () -> {
			Optional<Lease> nested = this.templates.first.tryAcquire(keys.get(1), TwoTemplates.waiting(Duration.ZERO));
			assertThat(nested).as("a plain lock inside a multi-key lock's scope re-enters").isPresent();
			nested.get().release();
		});
		assertFree(keys);
	}

	@Test
	void aLostKeyIsNeverSilent() {
		List<String> keys = keys(2);
		MultiLease lease = this.templates.first.acquireAll(keys,
				LockOptions.builder().leaseTime(Duration.ofMillis(300)).autoRenew(false).build());
		Conditions.await("the lease runs out", Duration.ofSeconds(10), () -> !lease.isHeld());
		Lease other = this.templates.second.acquire(keys.get(0), LockOptions.defaults());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
		assertThat(other.isHeld()).as("the release of a lost lease deletes nothing of the next owner").isTrue();
		other.release();
		assertFree(keys);
	}

	@Test
	void renewalKeepsEveryKey() {
		List<String> keys = keys(3);
		try (MultiLease lease = this.templates.first.acquireAll(keys,
				LockOptions.builder().leaseTime(Duration.ofMillis(600)).build())) {
			long batches = this.templates.firstBatches();
			Conditions.await("three renewal batches", Duration.ofSeconds(20),
					() -> this.templates.firstBatches() >= batches + 3);
			assertThat(lease.isHeld()).isTrue();
			for (String key : keys) {
				assertThat(LockAttempt.join(otherProvider().tryLock(LockRequest.exclusive(key, LONG_LEASE)))).as(key)
					.isInstanceOf(LockAttempt.Busy.class);
			}
		}
		assertFree(keys);
	}

	@Test
	void badKeysAreRefusedNamingThem() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.templates.first.acquireAll(List.of(), LockOptions.defaults()))
			.withMessageContaining("at least one key");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.templates.first.acquireAll(List.of("a", " "), LockOptions.defaults()))
			.withMessageContaining("blank");
	}

	/** Every key can be taken by a plain lock of the other template at once. */
	private void assertFree(List<String> keys) {
		for (String key : keys) {
			Optional<Lease> lease = this.templates.second.tryAcquire(key, TwoTemplates.waiting(Duration.ZERO));
			assertThat(lease).as("key %s is free", key).isPresent();
			lease.get().release();
		}
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
