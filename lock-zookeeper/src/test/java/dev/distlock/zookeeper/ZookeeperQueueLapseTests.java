package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.contract.Conditions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A fair waiter's place that lapses just as the waiter asks again, on a real server: the
 * lapse and the next attempt never both act on the place, so no node is left in the key's
 * queue that nobody would delete (it would block the key for every client for the rest of
 * the session).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperQueueLapseTests {

	private static final Duration LEASE = Duration.ofMinutes(5);

	/** Attempts, each about as long after the last as the place's queue timeout. */
	private static final int ATTEMPTS = 2000;

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	@Test
	void aPlaceLapsingAsItsWaiterAsksAgainLeavesNoNodeBehind() throws Exception {
		String key = "lapse-race";
		CuratorFramework holderClient = this.clients.client();
		ZookeeperLockProvider holder = this.clients.provider(holderClient);
		ZookeeperLockProvider waiter = this.clients.provider(this.clients.client());
		LockHandle held = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
		for (int i = 0; i < ATTEMPTS; i++) {
			assertThat(LockAttempt.join(waiter.tryLock(LockRequest.fair(key, LEASE, "w1", Duration.ofMillis(1)))))
				.isInstanceOf(LockAttempt.Busy.class);
			// the pacing that puts the lapse near each next attempt
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
		}
		waiter.withdraw(LockRequest.fair(key, LEASE, "w1", Duration.ofMillis(1)));
		String holderNode = ((ZookeeperLockHandle) held).path();
		String holderName = holderNode.substring(holderNode.lastIndexOf('/') + 1);
		// A lapse that fired just before the waiter left may still be deleting its node;
		// a leaked node would stay for the whole session.
		Conditions.await("only the holder's node left once the waiter left its place", Duration.ofSeconds(10),
				() -> List.of(holderName).equals(children(holderClient, holder.nodes().parentPath(key))));
		assertThat(children(holderClient, holder.nodes().parentPath(key))).containsExactly(holderName);
		assertThat(held.release()).isTrue();
		LockHandle next = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
		assertThat(next.release()).isTrue();
	}

	private static List<String> children(CuratorFramework client, String path) {
		try {
			return client.getChildren().forPath(path);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not list " + path, ex);
		}
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
