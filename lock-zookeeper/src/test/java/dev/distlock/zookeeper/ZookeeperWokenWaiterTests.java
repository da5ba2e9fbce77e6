package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.contract.Conditions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A waiter woken by the end of the node it watched holds at once, without reading the
 * queue again, only if that node was the last one in its way. Here the watched node is a
 * waiter that gives up, with the holder still ahead of it: the woken waiter must find the
 * key busy, and get it when the holder releases.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperWokenWaiterTests {

	/** Minutes: no lease runs out, and no busy answer's hint comes due, in a test. */
	private static final Duration LEASE = Duration.ofMinutes(2);

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	@Test
	void aReaderWokenByAWriterThatGaveUpWaitsForTheWriterBeforeIt() throws Exception {
		wokenByAWaiterThatGaveUp(LockRequest.shared(key(), LEASE));
	}

	@Test
	void aWriterWokenByAWriterThatGaveUpWaitsForTheHolderBeforeIt() throws Exception {
		wokenByAWaiterThatGaveUp(LockRequest.exclusive(key(), LEASE));
	}

	/**
	 * A holder, a writer waiting behind it, and the waiter of {@code request} behind
	 * both, each on a client of its own; the middle one gives up.
	 */
	private void wokenByAWaiterThatGaveUp(LockRequest request) throws Exception {
		String key = request.key();
		LockHandle holder = acquired(LockAttempt.join(provider().tryLock(LockRequest.exclusive(key, LEASE))));
		ZookeeperLockProvider middle = provider();
		ReleaseSignals.Subscription middleWaits = middle.releaseSignals().subscribe(key, () -> {
		});
		assertThat(attempt(middle, LockRequest.exclusive(key, LEASE))).as("the middle writer queues")
			.isInstanceOf(LockAttempt.Busy.class);
		ZookeeperLockProvider last = provider();
		AtomicInteger wakes = new AtomicInteger();
		try (ReleaseSignals.Subscription lastWaits = last.releaseSignals().subscribe(key, wakes::incrementAndGet)) {
			assertThat(attempt(last, request)).as("the last waiter queues").isInstanceOf(LockAttempt.Busy.class);
			middleWaits.close();
			Conditions.await("the last waiter to be woken by the middle writer's end", Duration.ofSeconds(20),
					() -> wakes.get() >= 1);
			int woken = wakes.get();
			assertThat(attempt(last, request)).as("the holder is still ahead").isInstanceOf(LockAttempt.Busy.class);
			assertThat(holder.release()).isTrue();
			Conditions.await("the last waiter to be woken by the release", Duration.ofSeconds(20),
					() -> wakes.get() > woken);
			LockHandle taken = acquired(attempt(last, request));
			assertThat(taken.fencingToken()).isGreaterThan(holder.fencingToken());
			assertThat(taken.release()).isTrue();
		}
	}

	private static LockAttempt attempt(ZookeeperLockProvider provider, LockRequest request) {
		return LockAttempt.join(provider.tryLock(request.withWaiting(true)));
	}

	private ZookeeperLockProvider provider() {
		return this.clients.provider(this.clients.client());
	}

	private static String key() {
		return "woken-" + UUID.randomUUID();
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
