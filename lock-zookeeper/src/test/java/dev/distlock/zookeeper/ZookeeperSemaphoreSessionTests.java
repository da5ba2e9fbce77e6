package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * Semaphores when a holder's session dies: its permits come back by themselves (no leak,
 * unlike Redisson #4462 and #2045), a waiter in another client takes them, woken by the
 * semaphore's watch rather than by polling, and the dead holder is told at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperSemaphoreSessionTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	private ZookeeperLockProvider provider(CuratorFramework client) {
		return this.clients.provider(client);
	}

	private DefaultLockTemplate template(ZookeeperLockProvider provider) {
		return this.clients.template(provider, LEASE);
	}

	@Test
	void aDeadSessionsPermitComesBackToAWaiterAndItsHolderIsTold() throws Exception {
		String key = "semaphore-" + UUID.randomUUID();
		LockOptions onePermit = LockOptions.builder().permits(1).build();
		CuratorFramework holderClient = this.clients.client();
		DefaultLockTemplate holder = template(provider(holderClient));
		ZookeeperLockProvider otherProvider = provider(this.clients.client());
		DefaultLockTemplate other = template(otherProvider);
		Lease dead = holder.acquire(key, onePermit);
		assertThat(LockAttempt.join(otherProvider.tryLock(LockRequest.permit(key, 1, LEASE)))).as("the permit is held")
			.isInstanceOf(LockAttempt.Busy.class);
		CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> other.acquire(key, onePermit),
				TestThreads.EACH);
		TestZookeeper.expireSession(holderClient);
		Lease taken = waiter.get(30, TimeUnit.SECONDS);
		assertThat(taken.fencingToken()).isGreaterThan(dead.fencingToken());
		Conditions.await("the dead session's holder is told", Duration.ofSeconds(30), () -> !dead.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(dead::release);
		assertThat(LockAttempt.join(otherProvider.tryLock(LockRequest.permit(key, 1, LEASE))))
			.as("the permit is held again, once")
			.isInstanceOf(LockAttempt.Busy.class);
		taken.release();
		LockHandle free = acquired(LockAttempt.join(otherProvider.tryLock(LockRequest.permit(key, 1, LEASE))));
		assertThat(free.release()).isTrue();
	}

	private static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected a permit but was " + attempt);
	}

}
