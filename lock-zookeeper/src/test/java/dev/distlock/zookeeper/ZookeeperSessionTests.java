package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.TcpProxy;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The session as the lease, on a real server: a holder whose session ends hears of it at
 * once (not at its next renewal), its stale fenced write is rejected, a short disconnect
 * loses nothing, a partition loses the lock within the session timeout plus one tick, and
 * a node of an ended session never grants a lock (CURATOR-604). The server ticks every
 * 500 ms, so sessions may be as short as a second.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperSessionTests {

	private static final int TICK_MILLIS = 500;

	private static final int SESSION_TIMEOUT_MILLIS = 2000;

	private static final Duration LEASE = Duration.ofSeconds(30);

	private TestingServer server;

	private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

	private final List<String> losses = new CopyOnWriteArrayList<>();

	@BeforeEach
	void start() {
		this.server = TestZookeeper.server(TICK_MILLIS);
	}

	@AfterEach
	void stop() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.server.close();
	}

	private <T extends AutoCloseable> T closing(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	private CuratorFramework client(String connectString) {
		return closing(TestZookeeper.client(connectString));
	}

	private ZookeeperLockProvider provider(CuratorFramework client) {
		return closing(new ZookeeperLockProvider(client));
	}

	private DefaultLockTemplate template(ZookeeperLockProvider provider) {
		RenewalScheduler scheduler = closing(new RenewalScheduler());
		return closing(
				new DefaultLockTemplate(provider, scheduler, TestZookeeper.templateDefaults(Duration.ofSeconds(20)),
						(lease, reason, holder) -> this.losses.add(lease.key() + ": " + reason), false));
	}

	private static String key() {
		return "session-" + UUID.randomUUID();
	}

	/**
	 * Ends a client's session on the server, as an expiry does: another connection takes
	 * the session over and closes it, so its ephemeral nodes go at once.
	 */
	private static void expireSession(CuratorFramework client) throws Exception {
		ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
		ZooKeeper killer = new ZooKeeper(client.getZookeeperClient().getCurrentConnectionString(),
				SESSION_TIMEOUT_MILLIS, (event) -> {
				}, zk.getSessionId(), zk.getSessionPasswd());
		Conditions.await("the session is taken over", Duration.ofSeconds(10),
				() -> killer.getState() == ZooKeeper.States.CONNECTED);
		killer.close();
	}

	@Test
	void aHolderWhoseSessionExpiresHearsOfItAtOnceAndItsStaleWriteIsRejected() throws Exception {
		String key = key();
		CuratorFramework holderClient = client(this.server.getConnectString());
		DefaultLockTemplate holder = template(provider(holderClient));
		DefaultLockTemplate other = template(provider(client(this.server.getConnectString())));
		FencedResource resource = new FencedResource();
		Lease stale = holder.acquire(key, LockOptions.defaults());
		assertThat(resource.write(stale.fencingToken())).isTrue();
		expireSession(holderClient);
		// Pushed: a renewal would come only a third of the 30 s lease later.
		Conditions.await("the loss is reported", Duration.ofSeconds(8), () -> !stale.isHeld());
		Conditions.await("the loss listener told", Duration.ofSeconds(5), () -> this.losses.size() == 1);
		assertThat(this.losses.get(0)).startsWith(key + ": the store reported it lost: the ZooKeeper session");
		Lease current = other.acquire(key, LockOptions.defaults());
		assertThat(current.fencingToken()).isGreaterThan(stale.fencingToken());
		assertThat(resource.write(current.fencingToken())).isTrue();
		assertThat(resource.write(stale.fencingToken())).as("the stale holder's fenced write").isFalse();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(stale::release).withMessageContaining("session");
		assertThat(current.isHeld()).isTrue();
		current.release();
	}

	/**
	 * A holder whose session ends after its release looked at the session and before the
	 * release's delete went out (a holder paused past its session releases before its
	 * client has heard of the expiry): the delete fails on the old session's handle, and
	 * its retry, on the new session, finds no node. The expiry removed it, and another
	 * client took the lock meanwhile: the release reports the lock lost, not released.
	 */
	@Test
	void aReleaseWhoseNodeWentWithItsSessionReportsTheLoss() throws Exception {
		// a store timeout that the session's end, inside the release, does not run out
		assertThat(releaseWhileItsSessionEnds(Duration.ofSeconds(30), false))
			.as("the release of a lock whose node went with its session")
			.isFalse();
	}

	/**
	 * As above, with the release's store timeout run out before its delete is answered:
	 * the client has moved on to another session, so the release reports the lock lost,
	 * not a store failure that would leave the holder guessing.
	 */
	@Test
	void aReleaseCutShortAfterItsSessionEndedReportsTheLoss() throws Exception {
		assertThat(releaseWhileItsSessionEnds(Duration.ofSeconds(2), true))
			.as("the release, cut short, of a lock whose session ended")
			.isFalse();
	}

	/**
	 * Takes a lock, then releases it; just before the release's delete goes out, the
	 * holder's session is expired on the server, its client gets a new session, another
	 * client takes the lock, and, with {@code outlastStoreTimeout}, the release's store
	 * timeout runs out.
	 * @return what the release answered
	 */
	private boolean releaseWhileItsSessionEnds(Duration storeTimeout, boolean outlastStoreTimeout) throws Exception {
		String key = key();
		AtomicReference<Consumer<String>> beforeDelete = new AtomicReference<>();
		CuratorFramework holderClient = closing(TestZookeeper.client(this.server.getConnectString(), beforeDelete));
		ZookeeperLockProvider holder = closing(
				new ZookeeperLockProvider(holderClient, ZookeeperLockProvider.DEFAULT_BASE_PATH, storeTimeout));
		ZookeeperLockProvider otherProvider = provider(client(this.server.getConnectString()));
		LockHandle stale = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
		String stalePath = ((ZookeeperLockHandle) stale).path();
		long oldSession = currentSession(holderClient);
		AtomicReference<LockHandle> next = new AtomicReference<>();
		AtomicReference<Throwable> hookFailed = new AtomicReference<>();
		beforeDelete.set((path) -> {
			long hooked = System.nanoTime();
			try {
				assertThat(path).as("the first delete after the hook was set").isEqualTo(stalePath);
				TestZookeeper.expireSession(holderClient);
				Conditions.await("the holder's client has a new session", Duration.ofSeconds(20),
						() -> currentSession(holderClient) != oldSession && currentSession(holderClient) != 0);
				next.set(awaitAcquired(otherProvider, key));
				if (outlastStoreTimeout) {
					Conditions.await("the release's store timeout has run out", storeTimeout.multipliedBy(5),
							() -> System.nanoTime() - hooked > storeTimeout.toNanos());
				}
			}
			catch (Throwable ex) {
				hookFailed.set(ex);
			}
		});
		boolean released = stale.release();
		assertThat(hookFailed.get()).as("the session's end inside the release").isNull();
		assertThat(next.get().fencingToken()).isGreaterThan(stale.fencingToken());
		assertThat(next.get().release()).isTrue();
		return released;
	}

	/**
	 * A partition between client and server: the session expires on the server a session
	 * timeout after it last heard from the client, and the holder is told within the
	 * session timeout plus one tick of the partition's start, before or as another client
	 * can take the lock.
	 */
	@Test
	void aPartitionedHolderIsToldWithinTheSessionTimeoutPlusOneTick() throws Exception {
		String key = key();
		TcpProxy proxy = closing(TcpProxy.start(this.server.getPort()));
		CuratorFramework holderClient = closing(TestZookeeper.client(proxy.connectString(), SESSION_TIMEOUT_MILLIS));
		assertThat(holderClient.getZookeeperClient().getLastNegotiatedSessionTimeoutMs())
			.isEqualTo(SESSION_TIMEOUT_MILLIS);
		DefaultLockTemplate holder = template(provider(holderClient));
		ZookeeperLockProvider otherProvider = provider(client(this.server.getConnectString()));
		Lease lease = holder.acquire(key, LockOptions.defaults());
		AtomicLong lostAt = new AtomicLong();
		long partitioned = System.nanoTime();
		proxy.blackhole();
		Conditions.await("the loss is reported", Duration.ofSeconds(10), () -> {
			if (!lease.isHeld()) {
				lostAt.compareAndSet(0, System.nanoTime());
				return true;
			}
			return false;
		});
		long reportedMillis = TimeUnit.NANOSECONDS.toMillis(lostAt.get() - partitioned);
		assertThat(reportedMillis).as("ms from the partition to the loss")
			.isLessThanOrEqualTo(SESSION_TIMEOUT_MILLIS + TICK_MILLIS);
		LockHandle next = awaitAcquired(otherProvider, key);
		assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		proxy.heal();
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
		assertThat(next.release()).isTrue();
	}

	/**
	 * A connection that drops and comes back within the session loses nothing: the node
	 * and the session survive, and so does the lease.
	 */
	@Test
	void aShortDisconnectLosesNothing() throws Exception {
		String key = key();
		TcpProxy proxy = closing(TcpProxy.start(this.server.getPort()));
		CuratorFramework holderClient = client(proxy.connectString());
		AtomicInteger reconnects = new AtomicInteger();
		holderClient.getConnectionStateListenable().addListener((client, state) -> {
			if (state == ConnectionState.RECONNECTED) {
				reconnects.incrementAndGet();
			}
		});
		long session = holderClient.getZookeeperClient().getZooKeeper().getSessionId();
		DefaultLockTemplate holder = template(provider(holderClient));
		ZookeeperLockProvider otherProvider = provider(client(this.server.getConnectString()));
		Lease lease = holder.acquire(key, LockOptions.defaults());
		proxy.disconnectAll();
		Conditions.await("the client reconnects", Duration.ofSeconds(20), () -> reconnects.get() > 0);
		assertThat(holderClient.getZookeeperClient().getZooKeeper().getSessionId()).isEqualTo(session);
		assertThat(lease.isHeld()).isTrue();
		assertThat(LockAttempt.join(otherProvider.tryLock(LockRequest.exclusive(key, LEASE))))
			.isInstanceOf(LockAttempt.Busy.class);
		lease.release();
		assertThat(this.losses).isEmpty();
	}

	/**
	 * CURATOR-604: a waiter whose queued node belongs to a session that has ended must
	 * not take the lock on it (the server deletes such a node when it expires the
	 * session, and another client would then take the lock too); it queues a node of its
	 * new session and is granted the lock on that one. Here the old session ends by
	 * Curator's client-side expiry; Curator then closes the old handle, which ends the
	 * session on the server too, so this test shows the outcome, not the race itself.
	 */
	@Test
	void aNodeOfAnEndedSessionNeverGrantsTheLock() throws Exception {
		String key = key();
		CuratorFramework waiterClient = client(this.server.getConnectString());
		CuratorFramework holderClient = client(this.server.getConnectString());
		ZookeeperLockProvider waiter = provider(waiterClient);
		ZookeeperLockProvider holder = provider(holderClient);
		LockHandle held = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
		AtomicInteger signals = new AtomicInteger();
		try (ReleaseSignals.Subscription subscription = waiter.releaseSignals()
			.subscribe(key, signals::incrementAndGet)) {
			assertThat(LockAttempt.join(waiter.tryLock(LockRequest.exclusive(key, LEASE).withWaiting(true))))
				.isInstanceOf(LockAttempt.Busy.class);
			long oldSession = waiterClient.getZookeeperClient().getZooKeeper().getSessionId();
			waiterClient.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
			Conditions.await("the waiter has a new session", Duration.ofSeconds(20),
					() -> currentSession(waiterClient) != oldSession && currentSession(waiterClient) != 0
							&& waiter.session().isConnected());
			assertThat(held.release()).isTrue();
			LockHandle taken = awaitAcquired(
					() -> LockAttempt.join(waiter.tryLock(LockRequest.exclusive(key, LEASE).withWaiting(true))), key);
			Stat stat = holderClient.checkExists().forPath(((ZookeeperLockHandle) taken).path());
			assertThat(stat).as("the node the lock was granted on").isNotNull();
			assertThat(stat.getEphemeralOwner()).as("the session that owns it")
				.isEqualTo(currentSession(waiterClient))
				.isNotEqualTo(oldSession);
			assertThat(taken.release()).isTrue();
		}
	}

	/**
	 * The fencing token is the node's czxid: when an idle key's parent (a container node)
	 * is removed, sequence numbers restart, and the token still rises.
	 */
	@Test
	void idleParentsAreRemovedAndTokensKeepRisingWhenSequenceNumbersRestart() throws Exception {
		String key = key();
		CuratorFramework client = client(this.server.getConnectString());
		ZookeeperLockProvider provider = provider(client);
		LockHandle first = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		String firstNode = ((ZookeeperLockHandle) first).path();
		assertThat(first.release()).isTrue();
		String parent = provider.nodes().parentPath(key);
		Conditions.await("the idle parent is removed", Duration.ofSeconds(10), () -> exists(client, parent) == null);
		LockHandle second = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		String secondNode = ((ZookeeperLockHandle) second).path();
		assertThat(sequence(secondNode)).as("the sequence number restarted").isEqualTo(sequence(firstNode));
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(second.release()).isTrue();
	}

	private static Stat exists(CuratorFramework client, String path) {
		try {
			return client.checkExists().forPath(path);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String sequence(String path) {
		return path.substring(path.length() - 10);
	}

	private static long currentSession(CuratorFramework client) {
		try {
			return client.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			return 0;
		}
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

	private static LockHandle awaitAcquired(ZookeeperLockProvider provider, String key) {
		return awaitAcquired(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))), key);
	}

	private static LockHandle awaitAcquired(java.util.function.Supplier<LockAttempt> attempt, String key) {
		AtomicLong tries = new AtomicLong();
		LockHandle[] taken = new LockHandle[1];
		Object[] last = new Object[1];
		try {
			Conditions.await("lock '" + key + "' is acquired", Duration.ofSeconds(20), () -> {
				tries.incrementAndGet();
				try {
					LockAttempt outcome = attempt.get();
					last[0] = outcome;
					if (outcome instanceof LockAttempt.Acquired acquired) {
						taken[0] = acquired.handle();
						return true;
					}
				}
				catch (RuntimeException ex) {
					// Not connected yet: try again.
					last[0] = ex;
				}
				return false;
			});
		}
		catch (AssertionError ex) {
			// what the next look at a flaky run needs: the last answer and the queue
			throw new AssertionError(ex.getMessage() + " after " + tries.get() + " tries; last answer: " + last[0], ex);
		}
		return taken[0];
	}

}
