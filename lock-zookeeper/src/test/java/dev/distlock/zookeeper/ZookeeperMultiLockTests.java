package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.TcpProxy;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.LossReporting;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Multi-key locks on ZooKeeper beyond the published contract: an attempt that fails part
 * way leaves no node behind, a session's end reports every key lost, and a waiter is
 * woken by the busy key's release, not by polling.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperMultiLockTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	private CuratorFramework client;

	private ZookeeperLockProvider provider;

	private ZookeeperLockProvider other;

	@BeforeEach
	void start() {
		this.client = this.clients.client();
		this.provider = this.clients.provider(this.client);
		this.other = this.clients.provider(this.clients.client());
	}

	private static List<String> keys(int count) {
		String prefix = "multi-" + UUID.randomUUID() + "-";
		return java.util.stream.IntStream.range(0, count).mapToObj((i) -> prefix + i).toList();
	}

	@Test
	void aBusyKeyLeavesNoNodeOfTheAttemptBehind() throws Exception {
		List<String> keys = keys(3);
		LockHandle blocker = acquired(this.other.tryLock(LockRequest.exclusive(keys.get(2), LEASE)));
		LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LEASE)));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(((LockAttempt.Busy) attempt).key()).as("the busy key is named").isEqualTo(keys.get(2));
		assertThat(nodes(keys.get(0))).as("the first key's node, created and given back").isZero();
		assertThat(nodes(keys.get(1))).as("the second key's node, created and given back").isZero();
		assertThat(nodes(keys.get(2))).as("the busy key: its holder's node only").isOne();
		blocker.release();
	}

	@Test
	void keysAreTakenInSortedOrderSoEveryCallerStopsAtTheLowestBusyKey() throws Exception {
		List<String> keys = keys(3);
		LockHandle second = acquired(this.other.tryLock(LockRequest.exclusive(keys.get(1), LEASE)));
		LockHandle third = acquired(this.other.tryLock(LockRequest.exclusive(keys.get(2), LEASE)));
		for (int i = 0; i < 10; i++) {
			LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LEASE)));
			assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
			assertThat(((LockAttempt.Busy) attempt).key()).as("attempt %d stops at the lowest busy key", i)
				.isEqualTo(keys.get(1));
		}
		assertThat(nodes(keys.get(0))).isZero();
		second.release();
		third.release();
	}

	@Test
	void anAttemptThatFailsPartWayDeletesTheNodesItCreated() throws Exception {
		List<String> keys = keys(2);
		// Ephemeral nodes take no children: creating the second key's node fails.
		this.clients.client()
			.create()
			.creatingParentsIfNeeded()
			.withMode(CreateMode.EPHEMERAL)
			.forPath(this.provider.nodes().parentPath(keys.get(1)));
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LEASE))));
		Conditions.await("the first key's node is deleted", Duration.ofSeconds(20), () -> nodes(keys.get(0)) == 0);
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(keys.get(0), LEASE))))
			.as("the first key is free")
			.isInstanceOf(LockAttempt.Acquired.class);
	}

	/**
	 * The one transaction that makes an attempt's nodes, whose reply is lost with the
	 * connection after the server made them: once the client is connected again they are
	 * found by their prefix and deleted, so no key stays taken by nodes nobody holds (the
	 * keys are held meanwhile, which the transaction's creates do not look at).
	 */
	@Test
	void nodesMadeByATransactionWhoseReplyWasLostAreDeleted() throws Exception {
		TcpProxy proxy = this.clients.closing(TcpProxy.start(this.clients.server.getPort()));
		ZookeeperLockProvider lossy = throughProxy(proxy);
		List<String> keys = keys(3);
		List<String> parents = keys.stream().map(lossy.nodes()::parentPath).toList();
		List<LockHandle> held = new ArrayList<>();
		for (String key : keys) {
			// Holders keep the keys' parents there, so that the transaction is the next
			// request sent.
			held.add(acquired(this.other.tryLock(LockRequest.exclusive(key, LEASE))));
		}
		List<Integer> changesBefore = childChanges(parents);
		long deadline = lossy.calls().deadline();
		long session = lossy.session().current(keys.get(0), "acquire", deadline);
		proxy.dropNextReplyAndReset();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> lossy.nodes()
			.createAllOwnedAndQueues(keys.get(0), parents, null, ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE,
					LEASE.toMillis(), session, deadline));
		assertThat(proxy.droppedReplies()).isOne();
		Conditions.await("the nodes of the transaction are deleted", Duration.ofSeconds(20),
				() -> keys.stream().allMatch((key) -> nodes(key) == 1));
		List<Integer> changesAfter = childChanges(parents);
		for (int i = 0; i < parents.size(); i++) {
			assertThat(changesAfter.get(i) - changesBefore.get(i))
				.as("a node made and deleted under %s", parents.get(i))
				.isEqualTo(2);
		}
		held.forEach(LockHandle::release);
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.all(keys, LEASE))))
			.isInstanceOf(LockAttempt.AcquiredAll.class);
	}

	/**
	 * Two multi-key callers that both read their keys' queues before either made its
	 * nodes: the transaction that comes second makes none, so its nodes never stand for a
	 * moment in the way of the keys' other callers, and is answered with nothing made.
	 */
	@Test
	void aTransactionThatAnotherMultiKeyCallersCameBeforeMakesNoNode() throws Exception {
		List<String> keys = keys(3);
		List<String> parents = keys.stream().map(this.provider.nodes()::parentPath).toList();
		List<LockHandle> held = new ArrayList<>();
		for (String key : keys) {
			// Holders keep the keys' parents there.
			held.add(acquired(this.other.tryLock(LockRequest.exclusive(key, LEASE))));
		}
		List<Integer> versions = versions(parents);
		long deadline = this.other.calls().deadline();
		assertThat(this.other.nodes()
			.createAllOwnedAndQueues(keys.get(0), parents, versions, ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE,
					LEASE.toMillis(), this.other.session().current(keys.get(0), "acquire", deadline), deadline)
			.nodes()).as("the first caller's transaction").hasSize(3);
		List<Integer> changesBefore = childChanges(parents);
		deadline = this.provider.calls().deadline();
		long session = this.provider.session().current(keys.get(0), "acquire", deadline);
		ZookeeperNodes.Made second = this.provider.nodes()
			.createAllOwnedAndQueues(keys.get(0), parents, versions, ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE,
					LEASE.toMillis(), session, deadline);
		assertThat(second.nodes()).as("the second caller's transaction, on versions read before the first one's")
			.isNull();
		assertThat(childChanges(parents)).as("nodes made under the keys").isEqualTo(changesBefore);
		assertThat(second.raced()).as("the queues read after it")
			.allSatisfy((looked) -> assertThat(looked.queue()).hasSize(2));
		List<Integer> after = second.raced().stream().map(ZookeeperNodes.Looked::version).toList();
		assertThat(after).as("the versions read after it").isEqualTo(versions(parents));
		assertThat(this.provider.nodes()
			.createAllOwnedAndQueues(keys.get(0), parents, after, ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE,
					LEASE.toMillis(), session, this.provider.calls().deadline())
			.nodes()).as("a transaction on the versions read after the race").hasSize(3);
		held.forEach(LockHandle::release);
	}

	/**
	 * Keys whose nodes' ACL lets clients create and delete under them but not write them:
	 * multi-key locks work all the same, without the versions.
	 */
	@Test
	void keysWhoseNodesRefuseWritesCanStillBeTakenTogether() throws Exception {
		List<String> keys = keys(2);
		List<ACL> noWrite = List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE,
				ZooDefs.Ids.ANYONE_ID_UNSAFE));
		for (String key : keys) {
			this.clients.client()
				.create()
				.creatingParentsIfNeeded()
				.withMode(CreateMode.PERSISTENT)
				.withACL(noWrite)
				.forPath(this.provider.nodes().parentPath(key));
		}
		for (int i = 0; i < 2; i++) {
			LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LEASE)));
			assertThat(attempt).as("attempt %d", i).isInstanceOf(LockAttempt.AcquiredAll.class);
			((LockAttempt.AcquiredAll) attempt).handles().forEach(LockHandle::release);
		}
	}

	private List<Integer> versions(List<String> parents) {
		return this.provider.nodes()
			.queues(parents.get(0), parents, ZookeeperNodes.QUEUE, this.provider.calls().deadline())
			.stream()
			.map(ZookeeperNodes.Looked::version)
			.toList();
	}

	/** A provider whose client reaches the server through {@code proxy}. */
	private ZookeeperLockProvider throughProxy(TcpProxy proxy) {
		return this.clients.provider(this.clients.closing(TestZookeeper.client(proxy.connectString())));
	}

	/**
	 * A multi-key lease whose keys' deletes are cut off with the connection: the deletes
	 * are sent again once the client is connected, on the releasing thread, not on the
	 * client's event thread, which must deliver their answers; the release reports every
	 * key released.
	 */
	@Test
	void aReleaseWhoseDeletesLoseTheirConnectionFreesEveryKey() throws Exception {
		TcpProxy proxy = this.clients.closing(TcpProxy.start(this.clients.server.getPort()));
		ZookeeperLockProvider lossy = throughProxy(proxy);
		List<String> keys = keys(3);
		MultiLease lease = this.clients.template(lossy, LEASE).acquireAll(keys, LockOptions.defaults());
		proxy.dropNextReplyAndReset();
		lease.release();
		assertThat(proxy.droppedReplies()).isOne();
		for (String key : keys) {
			assertThat(nodes(key)).as("the node of %s", key).isZero();
		}
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.all(keys, LEASE))))
			.isInstanceOf(LockAttempt.AcquiredAll.class);
	}

	/** How often each parent's children changed (its {@code cversion}). */
	private List<Integer> childChanges(List<String> parents) throws Exception {
		List<Integer> changes = new java.util.ArrayList<>();
		for (String parent : parents) {
			changes.add(this.client.checkExists().forPath(parent).getCversion());
		}
		return changes;
	}

	@Test
	void aSessionsEndReportsEveryKeyLost() throws Exception {
		List<String> keys = keys(3);
		LockAttempt.AcquiredAll all = (LockAttempt.AcquiredAll) LockAttempt
			.join(this.provider.tryLock(LockRequest.all(keys, LEASE)));
		Set<String> lost = ConcurrentHashMap.newKeySet();
		for (LockHandle handle : all.handles()) {
			((LossReporting) handle).onLoss((reason) -> lost.add(handle.key()));
		}
		List<String> templateKeys = keys(2);
		MultiLease lease = this.clients.template(this.provider, LEASE).acquireAll(templateKeys, LockOptions.defaults());
		TestZookeeper.expireSession(this.client);
		Conditions.await("every key is reported lost", Duration.ofSeconds(30), () -> lost.size() == keys.size());
		assertThat(lost).containsExactlyInAnyOrderElementsOf(keys);
		Conditions.await("the multi-key lease is lost", Duration.ofSeconds(30), () -> !lease.isHeld());
		for (String key : java.util.stream.Stream.concat(keys.stream(), templateKeys.stream()).toList()) {
			assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LEASE))))
				.as("key %s is free again", key)
				.isInstanceOf(LockAttempt.Acquired.class);
		}
	}

	@Test
	void aWaiterIsWokenByTheBusyKeysReleaseWithoutPolling() throws Exception {
		List<String> keys = keys(2);
		DefaultLockTemplate holder = this.clients.template(this.other, Duration.ofMinutes(2));
		Lease blocker = holder.acquire(keys.get(1), LockOptions.defaults());
		Counting counting = new Counting(this.provider);
		// Polls once a minute: only the watch on the busy key's holder can wake it in
		// time.
		DefaultLockTemplate waiting = this.clients
			.closing(new DefaultLockTemplate(counting, this.clients.closing(new RenewalScheduler()),
					LockOptions.builder()
						.retryInterval(Duration.ofMinutes(1))
						.build()
						.orElse(TestZookeeper.templateDefaults(Duration.ofSeconds(45)))));
		CompletableFuture<MultiLease> taken = CompletableFuture.supplyAsync(
				() -> waiting.acquireAll(keys, LockOptions.builder().waitTime(Duration.ofSeconds(45)).build()),
				TestThreads.EACH);
		Conditions.await("two busy attempts: one finds the key busy, the next watches its holder",
				Duration.ofSeconds(20), () -> counting.answered.get() == 2);
		assertThat(taken).isNotDone();
		// No attempt comes while the key stays busy. An absence can only be watched for a
		// while: a waiter that polled would try about ten times in this second (the
		// core's backoff starts at a few milliseconds and doubles).
		long quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
		while (System.nanoTime() < quietUntil) {
			assertThat(counting.answered).as("attempts while the key is busy").hasValue(2);
			Thread.sleep(10);
		}
		blocker.release();
		try (MultiLease lease = taken.get(20, TimeUnit.SECONDS)) {
			assertThat(lease.isHeld()).isTrue();
			assertThat(lease.fencingToken(keys.get(1))).isGreaterThan(blocker.fencingToken());
		}
		assertThat(counting.answered).as("attempts: two busy, one that took every key").hasValue(3);
	}

	private int nodes(String key) {
		try {
			String parent = this.provider.nodes().parentPath(key);
			return (this.client.checkExists().forPath(parent) != null)
					? this.client.getChildren().forPath(parent).size() : 0;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static LockHandle acquired(CompletionStage<LockAttempt> answer) {
		return ((LockAttempt.Acquired) LockAttempt.join(answer)).handle();
	}

	/** A store that counts the attempts it answered. */
	private static final class Counting implements ReleaseSignalling {

		private final ZookeeperLockProvider store;

		final AtomicInteger answered = new AtomicInteger();

		Counting(ZookeeperLockProvider store) {
			this.store = store;
		}

		@Override
		public CompletionStage<LockAttempt> tryLock(LockRequest request) {
			return this.store.tryLock(request).whenComplete((attempt, failure) -> this.answered.incrementAndGet());
		}

		@Override
		public ReleaseSignals releaseSignals() {
			return this.store.releaseSignals();
		}

		@Override
		public Set<LockKind> kinds() {
			return this.store.kinds();
		}

		@Override
		public Duration callTimeout() {
			return this.store.callTimeout();
		}

	}

}
