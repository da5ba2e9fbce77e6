package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockHandle;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A multi-key lease on a store that releases holds together: the keys go to the store in
 * one call, and a key the store no longer held is reported lost while the others are
 * freed.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MultiLeaseReleaseTests {

	private final InMemoryLockProvider memory = new InMemoryLockProvider();

	private final TogetherProvider store = new TogetherProvider(this.memory);

	@AutoClose
	private final Closing closing = new Closing();

	private final DefaultLockTemplate template = template();

	private DefaultLockTemplate template() {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(10))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		this.closing.add(template);
		return template;
	}

	private static List<String> keys() {
		String key = UUID.randomUUID().toString();
		return List.of(key + "-a", key + "-b", key + "-c");
	}

	@Test
	void theKeysOfALeaseGoToTheStoreInOneCall() {
		List<String> keys = keys();
		MultiLease lease = this.template.acquireAll(keys, LockOptions.defaults());
		lease.release();
		assertThat(this.store.releases).containsExactly(List.of(keys.get(2), keys.get(1), keys.get(0)));
		assertThat(this.memory.storedKeys()).isZero();
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void aKeyTheStoreNoLongerHeldIsReportedLostAndTheOthersAreFreed() {
		List<String> keys = keys();
		MultiLease lease = this.template.acquireAll(keys, LockOptions.defaults());
		assertThat(this.memory.expire(keys.get(1))).isTrue();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
		assertThat(this.store.releases).containsExactly(List.of(keys.get(2), keys.get(1), keys.get(0)));
		assertThat(this.memory.storedKeys()).isZero();
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void aFailedCallFailsTheReleaseWithTheStoresFailure() {
		List<String> keys = keys();
		MultiLease lease = this.template.acquireAll(keys, LockOptions.defaults());
		this.store.failNext = new LockBackendException(keys.get(0), "the store is down", new IllegalStateException());
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(lease::release)
			.withMessageContaining("the store is down");
		assertThat(this.template.heldLocks()).isZero();
	}

	/**
	 * The in-memory store, releasing a multi-key lease's holds in one call it records.
	 */
	private static final class TogetherProvider extends SignallingMemory implements BatchRelease, LocalHandover {

		/** The keys of each call, in order. */
		final List<List<String>> releases = new CopyOnWriteArrayList<>();

		/** What the next call throws, releasing nothing. */
		volatile @Nullable RuntimeException failNext;

		TogetherProvider(InMemoryLockProvider store) {
			super(store);
		}

		@Override
		public List<Boolean> releaseAll(List<LockHandle> handles) {
			this.releases.add(handles.stream().map(LockHandle::key).toList());
			RuntimeException failure = this.failNext;
			if (failure != null) {
				this.failNext = null;
				throw failure;
			}
			return handles.stream().map(LockHandle::release).toList();
		}

		@Override
		public boolean releasesHoldsTogether() {
			return true;
		}

	}

}
