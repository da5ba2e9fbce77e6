package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder JVM ({@link LockHolder}) that dies without releasing (SIGKILL: no shutdown
 * hook, no release) frees the lock when its lease runs out, and not before; the next
 * holder gets a greater fencing token. For any store: a store's test extends this class
 * and starts its store in {@link #startStore()}.
 */
public abstract class AbstractHolderKilledTests {

	/** The holder's lease. */
	protected static final Duration LEASE = Duration.ofSeconds(2);

	/** The lock's key. */
	protected static final String KEY = "killed-holder";

	/** Starts a fresh store for one test; the test closes it. */
	protected abstract StoreFixture startStore();

	/**
	 * Returns once the holder has renewed its lease at least once, so that only the kill
	 * can free the lock, and checks that it is still held. By default it lets one and a
	 * half leases pass after {@code heldAt} (the passing of time is what is tested) and
	 * checks that {@code contender} still cannot take the lock; a store that can observe
	 * the renewal itself overrides this to wait for it.
	 */
	protected void awaitRenewal(StoreFixture store, DefaultLockTemplate contender, long heldAt) {
		LockSupport.parkNanos(heldAt + LEASE.multipliedBy(3).dividedBy(2).toNanos() - System.nanoTime());
		assertThat(contender.tryAcquire(KEY, options(Duration.ZERO))).as("lock still held after renewal").isEmpty();
	}

	@Test
	void lockOfAKilledHolderIsFreeWithinItsLeaseAndTheNextTokenIsGreater() throws Exception {
		try (StoreFixture store = startStore()) {
			Map<String, String> settings = LockHolder.settings(store, KEY, LEASE);
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (ChildJvm holder = ChildJvm.start(LockHolder.class, settings)) {
				DefaultLockTemplate contender = Templates.of(Templates.answering(factory, settings), scheduler);
				long heldToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				long heldAt = System.nanoTime();
				awaitRenewal(store, contender, heldAt);
				assertThat(contender.tryAcquire(KEY, options(Duration.ZERO))).isEmpty();

				holder.kill();
				long killedAt = System.nanoTime();
				assertThat(contender.tryAcquire(KEY, options(Duration.ZERO)))
					.as("lock freed at once by a killed holder: it must outlive the crash until its lease runs out")
					.isEmpty();
				Duration bound = LEASE.plusSeconds(1);
				Optional<Lease> next = contender.tryAcquire(KEY, options(bound));
				long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
				assertThat(next).as("lock acquired within %s of the kill", bound).isPresent();
				try (Lease lease = next.get()) {
					assertThat(freedAfterMillis).isLessThanOrEqualTo(bound.toMillis());
					assertThat(lease.fencingToken()).isGreaterThan(heldToken);
				}
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	/** The holder's options, with {@code waitTime}. */
	protected static LockOptions options(Duration waitTime) {
		return LockOptions.builder().waitTime(waitTime).leaseTime(LEASE).autoRenew(true).build();
	}

}
