package dev.distlock.inmemory;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.support.Await;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LockOptions.Builder#minHoldTime} on the in-memory store: a lock released before
 * its minimum hold time stays taken until that time has passed since the acquire, without
 * a thread held; other callers are skipped until then; once the time has passed, a
 * release frees the lock at once. Two templates on one store stand for two nodes.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MinHoldTimeTests {

	private static final Duration MIN_HOLD = Duration.ofMillis(700);

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final DefaultLockTemplate node = template();

	private final DefaultLockTemplate otherNode = template();

	private DefaultLockTemplate template() {
		return new DefaultLockTemplate(this.store, this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ZERO)
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build());
	}

	@AfterEach
	void close() {
		this.node.close();
		this.otherNode.close();
		this.scheduler.close();
	}

	@Test
	void aLockReleasedEarlyStaysTakenUntilItsMinimumHoldTimeHasPassed() {
		String key = "job-" + UUID.randomUUID();
		long acquiredAt = System.nanoTime();
		Lease lease = this.node.acquire(key, LockOptions.builder().minHoldTime(MIN_HOLD).build());
		lease.release();
		assertThat(lease.isHeld()).isFalse();
		assertThat(this.node.heldLocks()).as("no lease kept in this JVM").isZero();
		assertThat(this.node.tryAcquire(key, LockOptions.defaults())).as("this node, after its release").isEmpty();
		assertThat(this.otherNode.tryAcquire(key, LockOptions.defaults())).as("the other node").isEmpty();
		Lease next = awaitAcquired(key);
		assertThat(System.nanoTime() - acquiredAt).as("nanoseconds before the other node got the lock")
			.isGreaterThanOrEqualTo(MIN_HOLD.toNanos());
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		next.release();
	}

	@Test
	void aLockHeldLongerThanItsMinimumHoldTimeIsFreedAtOnceOnRelease() {
		String key = "job-" + UUID.randomUUID();
		long acquiredAt = System.nanoTime();
		Lease lease = this.node.acquire(key, LockOptions.builder().minHoldTime(Duration.ofMillis(20)).build());
		Await.until("the minimum hold time has passed", Duration.ofSeconds(5),
				() -> System.nanoTime() - acquiredAt > Duration.ofMillis(25).toNanos());
		lease.release();
		Optional<Lease> next = this.otherNode.tryAcquire(key, LockOptions.defaults());
		assertThat(next).as("the other node right after the release").isPresent();
		next.get().release();
	}

	@Test
	void theAnnotationStyleSkipRunsOncePerMinimumHoldTime() {
		String key = "job-" + UUID.randomUUID();
		LockOptions job = LockOptions.builder().minHoldTime(MIN_HOLD).build();
		Optional<Lease> first = this.node.tryAcquire(key, job);
		assertThat(first).isPresent();
		first.get().release();
		assertThat(this.otherNode.tryAcquire(key, job)).as("the same run on a node whose clock is behind").isEmpty();
		awaitAcquired(key).release();
	}

	private Lease awaitAcquired(String key) {
		Lease[] acquired = new Lease[1];
		Await.until("the other node acquires '" + key + "'", Duration.ofSeconds(10), () -> {
			acquired[0] = this.otherNode.tryAcquire(key, LockOptions.defaults()).orElse(null);
			return acquired[0] != null;
		});
		return acquired[0];
	}

}
