package dev.distlock.zookeeper;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Locks in ZooKeeper over the application's {@link CuratorFramework}: one ephemeral
 * sequential node per attempt under a parent node per key, the lowest node holding the
 * lock, as Curator's {@code InterProcessMutex} does; the session as the lease.
 *
 * <p>
 * <b>One attempt.</b> An attempt creates the caller's node and lists the key's queue.
 * First in line: the lock is granted, if the node belongs to the current session (a node
 * of an expired session may linger for a moment; CURATOR-604). Not first: a caller that
 * will not wait deletes its node and hears {@code Busy}; a caller that waits (it has
 * {@linkplain ReleaseSignals#subscribe subscribed} to the key's releases, or queues
 * fairly) keeps its node across attempts and watches the one node just ahead of it, so a
 * release wakes one waiter, not the herd, and waiters take the lock in the order they
 * queued. Closing the subscription, or {@link #leaveQueue}, deletes a waiter's node.
 *
 * <p>
 * <b>Read-write locks.</b> Readers' nodes ({@code <uuid>-read-<sequence>}) join the same
 * queue as writers' ({@code <uuid>-lock-<sequence>}, the plain lock's), in one sequence:
 * a writer holds when its node is the first, a reader when no writer's node stands before
 * it. A waiting writer's node holds back every reader that comes after it (its intent),
 * so readers cannot starve it; a waiting reader watches the nearest writer's node before
 * it.
 *
 * <p>
 * <b>Multi-key locks, latches.</b> A multi-key attempt takes each key's node as a plain
 * lock does, all or none ({@link ZookeeperMultiLocks}); countdown latches are TTL nodes
 * of their own ({@link ZookeeperLatches}).
 *
 * <p>
 * <b>Lost replies.</b> Nodes are created with Curator's protection (a unique name prefix,
 * looked for again after a connection loss), and an attempt whose caller gives up (store
 * timeout, interrupt) deletes the node its create made whenever that reply comes.
 *
 * <p>
 * <b>Fencing.</b> The token is the node's {@code czxid}, which rises with every write to
 * the ensemble; sequence numbers restart when an idle key's parent (a container node) is
 * removed by the server.
 *
 * <p>
 * <b>Leases.</b> See {@link ZookeeperLockHandle} and {@link SessionGuard}: a lock is lost
 * at once when its session ends, and the holder's listener is told unasked
 * ({@link dev.distlock.spi.LossReporting}).
 *
 * <p>
 * Every call returns within the store timeout, whatever Curator's timeouts.
 */
public final class ZookeeperLockProvider implements ReleaseSignalling, AutoCloseable {

	private static final Set<LockKind> KINDS = Set.of(LockKind.EXCLUSIVE, LockKind.FAIR, LockKind.SHARED,
			LockKind.PERMITS, LockKind.MULTI);

	private static final Log logger = LogFactory.getLog(ZookeeperLockProvider.class);

	/** The bound of one call when none is configured. */
	public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofSeconds(3);

	/** The default parent of every key's node. */
	public static final String DEFAULT_BASE_PATH = "/distributed-lock";

	/** The marker in the name of a writer's node: a plain lock's, a write lock's. */
	static final String NODE_NAME = "-lock-";

	/** The marker in the name of a reader's node, in the same queue as the writers'. */
	private static final String READ_NAME = "-read-";

	private final CuratorFramework client;

	private final String basePath;

	private final ZookeeperCalls calls;

	private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "distlock-zookeeper-timer");
		thread.setDaemon(true);
		return thread;
	});

	/** Loss reports run here, so that listeners never hold up a timer or Curator. */
	private final ExecutorService reporter = Executors.newSingleThreadExecutor((runnable) -> {
		Thread thread = new Thread(runnable, "distlock-zookeeper-loss");
		thread.setDaemon(true);
		return thread;
	});

	private final SessionGuard session;

	private final ZookeeperSemaphores semaphores = new ZookeeperSemaphores(this);

	private final ReleaseSignals permitSignals = this.semaphores.signals();

	private final ZookeeperMultiLocks multiLocks = new ZookeeperMultiLocks(this);

	private final ZookeeperLatches latches = new ZookeeperLatches(this);

	/** Waiters' places, by key and waiter ("t" + thread id, or "w" + fair waiter id). */
	private final Map<String, QueuedNode> queued = new ConcurrentHashMap<>();

	private final ReleaseSignals signals = new ReleaseSignals() {

		@Override
		public Subscription subscribe(String key, Runnable onRelease) {
			String id = waiterOfThread(key);
			QueuedNode node = ZookeeperLockProvider.this.queued.computeIfAbsent(id, (k) -> new QueuedNode(key));
			node.onRelease = onRelease;
			return () -> leave(id);
		}

		@Override
		public boolean isListening() {
			return ZookeeperLockProvider.this.session.isConnected();
		}

		@Override
		public boolean isListening(String key) {
			QueuedNode node = ZookeeperLockProvider.this.queued.get(waiterOfThread(key));
			return isListening() && node != null && node.watched != null;
		}

	};

	/**
	 * A provider with the default base path and store timeout.
	 * @param client a started Curator client
	 */
	public ZookeeperLockProvider(CuratorFramework client) {
		this(client, DEFAULT_BASE_PATH, DEFAULT_STORE_TIMEOUT);
	}

	/**
	 * @param client a started Curator client; the provider listens to its connection
	 * states and never closes it
	 * @param basePath the parent of every key's node: absolute, no trailing slash
	 * @param storeTimeout the longest a caller waits for ZooKeeper in one call, whatever
	 * Curator's connection and retry timeouts
	 */
	public ZookeeperLockProvider(CuratorFramework client, String basePath, Duration storeTimeout) {
		if (storeTimeout.isNegative() || storeTimeout.isZero()) {
			throw new IllegalArgumentException("storeTimeout must be positive but was " + storeTimeout);
		}
		if (!basePath.startsWith("/") || (basePath.length() > 1 && basePath.endsWith("/")) || basePath.contains("//")) {
			throw new IllegalArgumentException("The ZooKeeper base path must be absolute, with no empty segment and no"
					+ " trailing '/', but was '" + basePath + "'");
		}
		if (client.getState() != CuratorFrameworkState.STARTED) {
			throw new IllegalArgumentException(
					"The CuratorFramework must be started before locks use it, but its state is " + client.getState());
		}
		this.client = client;
		this.basePath = basePath.equals("/") ? "" : basePath;
		this.calls = new ZookeeperCalls(storeTimeout);
		this.session = new SessionGuard(client, this.timers);
		this.session.start();
	}

	@Override
	public ReleaseSignals releaseSignals() {
		return this.signals;
	}

	/**
	 * Plain, fair and read locks, semaphores (a permit is one ephemeral sequential node,
	 * granted when it stands among the first {@code permits}; see
	 * {@link ZookeeperSemaphores}) and multi-key locks (each key's node exactly as a
	 * plain lock's; see {@link ZookeeperMultiLocks}).
	 */
	@Override
	public Set<LockKind> kinds() {
		return KINDS;
	}

	/**
	 * Countdown latches as TTL nodes ({@link ZookeeperLatches}): they need a server that
	 * allows them ({@code zookeeper.extendedTypesEnabled=true}); on one that does not,
	 * every latch call fails saying so.
	 */
	@Override
	public Optional<LatchStore> latches() {
		return Optional.of(this.latches);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Answers on the calling thread, within the store timeout.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> take(request));
	}

	private LockAttempt take(LockRequest request) {
		String key = request.key();
		Duration leaseTime = request.leaseTime();
		String waiterId = request.waiterId();
		return switch (request.kind()) {
			case EXCLUSIVE -> (waiterId == null) ? tryLock(key, leaseTime, request.waiting())
					: tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout());
			case FAIR -> tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> tryLockShared(key, leaseTime, request.waiting());
			case PERMITS -> this.semaphores.tryAcquire(key, request.permits(), leaseTime);
			case MULTI -> this.multiLocks.tryLockAll(request);
		};
	}

	@Override
	public void withdraw(LockRequest request) {
		String waiterId = Objects.requireNonNull(request.waiterId());
		if (request.kind() == LockKind.FAIR) {
			leaveQueue(request.key(), waiterId);
		}
		else {
			withdrawIntent(request.key(), waiterId);
		}
	}

	private LockAttempt tryLock(String key, Duration leaseTime, boolean waiting) {
		return tryOnce(key, leaseTime, waiting, false);
	}

	/**
	 * One attempt of a caller that waits with the thread's subscription (its place is
	 * kept while it waits) or of one that does not wait.
	 */
	private LockAttempt tryOnce(String key, Duration leaseTime, boolean waiting, boolean read) {
		String id = waiterOfThread(key);
		QueuedNode node = waiting ? this.queued.get(id) : null;
		if (node == null) {
			return attempt(key, leaseTime, null, read, true);
		}
		synchronized (node) {
			// A place left meanwhile (the provider closing) is no longer this waiter's:
			// a node created on it would be deleted by nobody.
			return attempt(key, leaseTime, (this.queued.get(id) == node) ? node : null, read, true);
		}
	}

	/**
	 * A reader's node joins the key's one queue: it is granted when no writer's node
	 * (held or waiting) stands before it. A reader that waits keeps its node, watching
	 * the nearest writer's node before it.
	 */
	private LockAttempt tryLockShared(String key, Duration leaseTime, boolean waiting) {
		return tryOnce(key, leaseTime, waiting, true);
	}

	/**
	 * A writer that waits with the thread's subscription ({@code DefaultLockTemplate}'s
	 * writers do) keeps its node in the queue while it waits, as a plain lock's waiter
	 * does: that node is its intent, and holds back every reader whose node comes after
	 * it; it goes when the wait ends (or with the session), not after
	 * {@code intentTimeout}. A writer that calls without a subscription keeps its node,
	 * as its intent, only while nothing but readers stand before it, for
	 * {@code intentTimeout} after each attempt.
	 */
	private LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout) {
		if (this.queued.containsKey(waiterOfThread(key))) {
			return tryOnce(key, leaseTime, true, false);
		}
		return keptAttempt(key, leaseTime, intentWaiter(key, waiterId), intentTimeout, false);
	}

	private void withdrawIntent(String key, String waiterId) {
		leave(intentWaiter(key, waiterId));
	}

	/**
	 * One persistent watch per semaphore waited on; every permit freed wakes its waiters.
	 */
	@Override
	public ReleaseSignals permitSignals() {
		return this.permitSignals;
	}

	private LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		return keptAttempt(key, leaseTime, fairWaiter(key, waiterId), queueTimeout, true);
	}

	/**
	 * An attempt of a waiter known by its id, not its thread: its node is kept between
	 * attempts for {@code timeout} after each, then deleted.
	 * @param behindWriters whether the node is kept behind a writer too, or only behind
	 * readers
	 */
	private LockAttempt keptAttempt(String key, Duration leaseTime, String id, Duration timeout,
			boolean behindWriters) {
		while (true) {
			QueuedNode node = this.queued.computeIfAbsent(id, (k) -> new QueuedNode(key));
			QueuedNode subscribed = this.queued.get(waiterOfThread(key));
			if (subscribed != null) {
				node.onRelease = subscribed.onRelease;
			}
			synchronized (node) {
				if (this.queued.get(id) != node) {
					// The place lapsed between the lookup and the monitor: a node created
					// on it now would be in no one's map, and never deleted.
					continue;
				}
				return keptAttempt(key, leaseTime, id, node, timeout, behindWriters);
			}
		}
	}

	/**
	 * An attempt on a waiter's place, which is still mapped: the caller holds its
	 * monitor. A place not granted lapses {@code timeout} after the attempt, unless the
	 * waiter asks again first; the lapse of an earlier attempt, due meanwhile, does
	 * nothing.
	 */
	private LockAttempt keptAttempt(String key, Duration leaseTime, String id, QueuedNode node, Duration timeout,
			boolean behindWriters) {
		long attempt = ++node.attempts;
		if (node.lapse != null) {
			node.lapse.cancel(false);
			node.lapse = null;
		}
		boolean granted = false;
		try {
			LockAttempt outcome = attempt(key, leaseTime, node, false, behindWriters);
			granted = outcome instanceof LockAttempt.Acquired;
			return outcome;
		}
		finally {
			if (granted) {
				this.queued.remove(id, node);
			}
			else {
				node.lapse = schedule(() -> lapse(id, node, attempt), Math.max(1, timeout.toMillis()));
			}
		}
	}

	private void leaveQueue(String key, String waiterId) {
		leave(fairWaiter(key, waiterId));
	}

	/**
	 * One attempt; {@code node} is the waiter's kept place, or null for a caller that
	 * does not wait.
	 * @param read a reader's attempt, or a writer's
	 * @param behindWriters whether a waiter keeps its node when a writer's node stands
	 * before it (else it keeps it only behind readers)
	 */
	private LockAttempt attempt(String key, Duration leaseTime, @Nullable QueuedNode node, boolean read,
			boolean behindWriters) {
		long deadline = this.calls.deadline();
		long sessionId = this.session.current(key, "acquire", deadline);
		long leaseMillis = Math.max(1, leaseTime.toMillis());
		String parent = parentPath(key);
		if (node != null && node.path != null && (node.sessionId != sessionId || node.read != read)) {
			// A place taken in a session that has since ended, or for the other side of
			// the key. The server removes an ended session's node only when it expires
			// that session, which a client-side expiry does not tell it (up to a session
			// timeout later): until then this waiter would queue behind its own old node.
			// Deleted here, within this call's deadline; a failure leaves the path, so
			// the next attempt tries again.
			delete(key, node.path);
			node.path = null;
			node.watched = null;
		}
		String path;
		long czxid;
		if (node != null && node.path != null) {
			path = node.path;
			czxid = node.czxid;
		}
		else {
			Created created = createOwned(key, parent, read ? READ_NAME : NODE_NAME, leaseMillis, sessionId, deadline);
			path = created.path();
			czxid = created.stat().getCzxid();
			if (node != null) {
				node.path = path;
				node.czxid = czxid;
				node.sessionId = sessionId;
				node.read = read;
			}
		}
		try {
			return positionOf(key, parent, path, czxid, sessionId, leaseMillis, node, read, behindWriters, deadline);
		}
		catch (RuntimeException ex) {
			if (node == null) {
				deleteInBackground(path);
			}
			throw ex;
		}
	}

	/**
	 * Where the caller's node stands in the key's queue (writers' and readers' nodes in
	 * one sequence), and what follows: a writer holds when its node is the first, a
	 * reader when no writer's node is before it. A waiter watches the node it waits
	 * behind: a writer the node just before it, a reader the nearest writer's node before
	 * it.
	 */
	private LockAttempt positionOf(String key, String parent, String path, long czxid, long sessionId, long leaseMillis,
			@Nullable QueuedNode node, boolean read, boolean behindWriters, long deadline) {
		List<String> queue = queue(key, parent, deadline);
		String name = path.substring(parent.length() + 1);
		int index = queue.indexOf(name);
		if (index < 0) {
			if (node != null) {
				node.path = null;
			}
			throw new LockBackendException(key, "Cannot acquire lock '" + key + "': its queued node " + path
					+ " is gone (its session ended, or it was deleted)", new IllegalStateException());
		}
		int writerBefore = lastWriterBefore(queue, index);
		int blocker = read ? writerBefore : index - 1;
		if (blocker < 0) {
			if (node != null) {
				node.path = null;
				node.watched = null;
			}
			ZookeeperLockHandle handle = new ZookeeperLockHandle(this, key, path, czxid, sessionId, leaseMillis);
			handle.startLease();
			this.session.track(handle);
			return new LockAttempt.Acquired(handle);
		}
		if (node == null || (!behindWriters && writerBefore >= 0)) {
			long holderLease = leaseOf(key, parent + "/" + queue.get(read ? blocker : 0), null, deadline);
			delete(key, path);
			if (node != null) {
				node.path = null;
				node.watched = null;
			}
			return new LockAttempt.Busy(Duration.ofMillis(holderLease));
		}
		String ahead = parent + "/" + queue.get(blocker);
		if (!ahead.equals(node.watched)) {
			node.watched = ahead;
			long lease = leaseOf(key, ahead, node, deadline);
			if (lease == 0) {
				// Gone before the watch was set: no event will come, so look again now.
				node.watched = null;
				node.onRelease.run();
				lease = 1;
			}
			node.aheadLeaseMillis = lease;
		}
		return new LockAttempt.Busy(Duration.ofMillis(node.aheadLeaseMillis));
	}

	/**
	 * Creates the caller's node, as {@link #create}, and checks that the current session
	 * owns it: a node of an ended session is going away (CURATOR-604).
	 */
	Created createOwned(String key, String parent, String nodeName, long leaseMillis, long sessionId, long deadline) {
		Created created = create(key, parent, nodeName, leaseMillis, deadline);
		long owner = created.stat().getEphemeralOwner();
		if (owner != sessionId) {
			deleteInBackground(created.path());
			throw new LockBackendException(key,
					"Cannot acquire lock '" + key + "': its node was created by session " + Long.toHexString(owner)
							+ ", not by the current session " + Long.toHexString(sessionId),
					new IllegalStateException());
		}
		return created;
	}

	/**
	 * Creates the caller's node ({@code <uuid><nodeName><sequence>}, protected, ephemeral
	 * and sequential) recording the lease. If the caller gives up before the reply, the
	 * node that the create made is deleted when the reply comes. A key's parent that the
	 * servers remove (an idle container) between Curator creating it and creating the
	 * node under it is created again.
	 */
	private Created create(String key, String parent, String nodeName, long leaseMillis, long deadline) {
		for (int attempt = 1;; attempt++) {
			Stat stat = new Stat();
			String prefix = parent + "/" + UUID.randomUUID() + nodeName;
			CompletableFuture<CuratorEvent> reply = this.calls.send((callback) -> this.client.create()
				.storingStatIn(stat)
				.creatingParentContainersIfNeeded()
				.withProtection()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
				.inBackground(callback)
				.forPath(prefix, Long.toString(leaseMillis).getBytes(StandardCharsets.US_ASCII)));
			CuratorEvent event;
			try {
				event = this.calls.await(key, "acquire", reply, deadline);
			}
			catch (LockBackendException ex) {
				CompletableFuture<?> undone = reply
					.thenCompose((late) -> (ZookeeperCalls.code(late) == KeeperException.Code.OK)
							? deleteInBackground(late.getName()) : CompletableFuture.completedFuture(null));
				if (Thread.currentThread().isInterrupted()) {
					// The caller stopped waiting, not ZooKeeper: the reply and the delete
					// of
					// the node it made still come within the deadline, and the caller is
					// not
					// told "not held" before they have.
					Interrupts.setAside(() -> awaitQuietly(undone, deadline));
				}
				throw ex;
			}
			KeeperException.Code code = ZookeeperCalls.code(event);
			if (code == KeeperException.Code.OK) {
				Stat created = (event.getStat() != null) ? event.getStat() : stat;
				if (created.getCzxid() == 0) {
					// Curator found its node again after a connection loss, by name only.
					created = statOf(key, event.getName(), deadline);
				}
				return new Created(event.getName(), created);
			}
			if (code != KeeperException.Code.NONODE || attempt == 5) {
				throw ZookeeperCalls.failed(key, "acquire", event);
			}
		}
	}

	/** The stat of a node this attempt created; the attempt fails if it is gone. */
	private Stat statOf(String key, String path, long deadline) {
		CuratorEvent event = this.calls.call(key, "acquire", deadline,
				(callback) -> this.client.checkExists().inBackground(callback).forPath(path));
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK || event.getStat() == null) {
			throw ZookeeperCalls.failed(key, "acquire", event);
		}
		return event.getStat();
	}

	/** A node that an attempt created, and its stat as the create returned it. */
	record Created(String path, Stat stat) {
	}

	/**
	 * A lock key's queue: its writers' and readers' nodes, in sequence order (one
	 * sequence per parent, so the order is total).
	 */
	List<String> queue(String key, String parent, long deadline) {
		return children(key, parent, List.of(NODE_NAME, READ_NAME), deadline);
	}

	/** The index of the last writer's node before {@code index}, or -1. */
	private static int lastWriterBefore(List<String> queue, int index) {
		for (int i = index - 1; i >= 0; i--) {
			if (queue.get(i).contains(NODE_NAME)) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * The nodes under {@code parent} whose name holds {@code marker}, in sequence order.
	 */
	List<String> children(String key, String parent, String marker, long deadline) {
		return children(key, parent, List.of(marker), deadline);
	}

	/**
	 * The nodes under {@code parent} whose name holds one of {@code markers}, in sequence
	 * order (the sequence follows the marker).
	 */
	private List<String> children(String key, String parent, List<String> markers, long deadline) {
		CuratorEvent event = this.calls.call(key, "acquire", deadline,
				(callback) -> this.client.getChildren().inBackground(callback).forPath(parent));
		if (ZookeeperCalls.code(event) == KeeperException.Code.NONODE) {
			return List.of();
		}
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK) {
			throw ZookeeperCalls.failed(key, "acquire", event);
		}
		return event.getChildren()
			.stream()
			.filter((child) -> sequence(child, markers) != null)
			.sorted(Comparator.comparing((String child) -> sequence(child, markers)))
			.toList();
	}

	/** The sequence number in a node's name: what follows its marker, or null. */
	private static @Nullable String sequence(String child, List<String> markers) {
		for (String marker : markers) {
			int at = child.lastIndexOf(marker);
			if (at >= 0) {
				return child.substring(at + marker.length());
			}
		}
		return null;
	}

	/**
	 * The lease recorded in a node, watching it for {@code waiter} if given.
	 * @return the lease in milliseconds, or 0 if the node is gone
	 */
	long leaseOf(String key, String path, @Nullable QueuedNode waiter, long deadline) {
		CuratorEvent event = this.calls.call(key, "acquire", deadline,
				(callback) -> ((waiter != null) ? this.client.getData().usingWatcher(waiter.watcher)
						: this.client.getData())
					.inBackground(callback)
					.forPath(path));
		if (ZookeeperCalls.code(event) == KeeperException.Code.NONODE) {
			return 0;
		}
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK) {
			throw ZookeeperCalls.failed(key, "acquire", event);
		}
		try {
			return Math.max(1, Long.parseLong(new String(event.getData(), StandardCharsets.US_ASCII)));
		}
		catch (NumberFormatException ex) {
			return 1;
		}
	}

	/**
	 * Records a new lease time in the holder's node.
	 * @return false if the node is gone
	 */
	boolean recordLease(String key, String path, long leaseMillis) {
		CuratorEvent event = this.calls.call(key, "renew", this.calls.deadline(),
				(callback) -> this.client.setData()
					.inBackground(callback)
					.forPath(path, Long.toString(leaseMillis).getBytes(StandardCharsets.US_ASCII)));
		if (ZookeeperCalls.code(event) == KeeperException.Code.NONODE) {
			return false;
		}
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK) {
			throw ZookeeperCalls.failed(key, "renew", event);
		}
		return true;
	}

	/**
	 * Deletes a node within the store timeout; a delete cut short by a connection loss
	 * goes on in the background until it succeeds or the session ends (Curator's
	 * guaranteed delete).
	 * @return false if the node was gone before this delete: another client deleted it
	 * (by hand, say), so the lock it stood for was lost
	 */
	boolean delete(String key, String path) {
		long deadline = this.calls.deadline();
		CompletableFuture<KeeperException.Code> first = deleteOnce(path);
		KeeperException.Code code;
		try {
			code = this.calls.await(key, "release", first, deadline);
		}
		catch (LockBackendException ex) {
			first.whenComplete((late, failure) -> {
				if (late != KeeperException.Code.OK && late != KeeperException.Code.NONODE) {
					deleteInBackground(path);
				}
			});
			throw ex;
		}
		if (code == KeeperException.Code.OK) {
			return true;
		}
		if (code == KeeperException.Code.NONODE) {
			// The first try found no node: nobody but this call would delete it while
			// its session lives (a session that ended is the session guard's to report).
			return false;
		}
		// The first try's fate is unknown (the connection dropped, or the client was
		// between handles): it may have deleted the node. Curator retries it until it
		// succeeds or the session ends; a retry that finds no node finds that delete's
		// work, hence idempotent.
		CuratorEvent event = this.calls.call(key, "release", deadline,
				(callback) -> this.client.delete().idempotent().guaranteed().inBackground(callback).forPath(path));
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK) {
			throw ZookeeperCalls.failed(key, "release", event);
		}
		return true;
	}

	/**
	 * One try of a delete, with no retry: Curator's background delete retries after a
	 * connection loss, and with {@code idempotent()} it answers a missing node as a
	 * deleted one even on the first try, which would hide a node deleted by another
	 * client. A failure to send completes the reply with {@code CONNECTIONLOSS}: the
	 * caller then lets Curator retry.
	 */
	private CompletableFuture<KeeperException.Code> deleteOnce(String path) {
		CompletableFuture<KeeperException.Code> reply = new CompletableFuture<>();
		try {
			this.client.getZookeeperClient()
				.getZooKeeper()
				.delete(ZKPaths.fixForNamespace(this.client.getNamespace(), path), -1,
						(rc, deleted, context) -> reply.complete(KeeperException.Code.get(rc)), null);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.debug("Could not send the delete of lock node " + path, ex);
			reply.complete(KeeperException.Code.CONNECTIONLOSS);
		}
		return reply;
	}

	/** Deletes a node without waiting; retried until it succeeds or the session ends. */
	CompletableFuture<CuratorEvent> deleteInBackground(String path) {
		CompletableFuture<CuratorEvent> delete = this.calls
			.send((callback) -> this.client.delete().guaranteed().inBackground(callback).forPath(path));
		delete.whenComplete((event, failure) -> {
			if (failure != null) {
				logger.debug("Could not delete lock node " + path, failure);
			}
		});
		return delete;
	}

	/** Waits for {@code future} until {@code deadline}; whatever it ends with. */
	private static @Nullable Void awaitQuietly(CompletableFuture<?> future, long deadline) {
		try {
			future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("A lock node made for a caller who stopped waiting is still being deleted", ex);
		}
		return null;
	}

	/**
	 * A handle of this provider released lock {@code key} (node {@code path}): this
	 * provider's waiters on the key that watch no node (between attempts, or a subscriber
	 * whose own attempt took the key) are told at once. The others watch the node they
	 * wait behind, whose end ZooKeeper signals.
	 */
	void released(String key, String path) {
		if (!path.startsWith(parentPath(key) + "/")) {
			return;
		}
		for (QueuedNode node : this.queued.values()) {
			if (node.key.equals(key) && node.watched == null) {
				node.onRelease.run();
			}
		}
	}

	/**
	 * The calling thread's subscription to {@code key}'s releases, if it has one: a
	 * multi-key waiter's watch is kept on it, so that the core's wait sees it listening.
	 */
	@Nullable QueuedNode subscription(String key) {
		return this.queued.get(waiterOfThread(key));
	}

	/** A waiter gives up its place: its node, if any, is deleted. */
	private void leave(String id) {
		QueuedNode node;
		while ((node = this.queued.get(id)) != null) {
			synchronized (node) {
				if (this.queued.remove(id, node)) {
					drop(node);
					return;
				}
			}
		}
	}

	/**
	 * A kept place lapses: the waiter did not ask again within its timeout after attempt
	 * number {@code attempt}. Under the place's monitor, so that it never runs during an
	 * attempt, and only if no later attempt ran.
	 */
	private void lapse(String id, QueuedNode node, long attempt) {
		synchronized (node) {
			if (node.attempts == attempt && this.queued.remove(id, node)) {
				drop(node);
			}
		}
	}

	/**
	 * Deletes a place's node, if any; the caller holds its monitor and has unmapped it.
	 */
	private void drop(QueuedNode node) {
		if (node.lapse != null) {
			node.lapse.cancel(false);
			node.lapse = null;
		}
		if (node.path != null) {
			deleteInBackground(node.path);
			node.path = null;
			node.watched = null;
		}
	}

	SessionGuard session() {
		return this.session;
	}

	ScheduledFuture<?> schedule(Runnable task, long delayMillis) {
		return this.timers.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
	}

	/** Tells a loss listener on the reporting thread. */
	void report(Consumer<String> listener, String reason) {
		try {
			this.reporter.execute(() -> listener.accept(reason));
		}
		catch (RuntimeException ex) {
			logger.warn("Could not report a lost ZooKeeper lock: " + reason, ex);
		}
	}

	/** Every call returns within the store timeout. */
	@Override
	public Duration callTimeout() {
		return this.calls.timeout();
	}

	@Override
	public String storeName() {
		return "zookeeper";
	}

	/** The key's parent node: the key URL-encoded, so that it is one path segment. */
	String parentPath(String key) {
		return this.basePath + "/" + encode(key);
	}

	/**
	 * The parent node of semaphore {@code key}'s permits: under {@code ~semaphores}, a
	 * name no encoded key can have ({@code ~} is always encoded), so semaphores and locks
	 * of the same key never meet.
	 */
	String semaphorePath(String key) {
		return this.basePath + "/~semaphores/" + encode(key);
	}

	/** The node of latch {@code key}: under {@code ~latches}, apart from locks. */
	String latchPath(String key) {
		return this.basePath + "/~latches/" + encode(key);
	}

	private static String encode(String key) {
		return URLEncoder.encode(key, StandardCharsets.UTF_8).replace(".", "%2E").replace("*", "%2A");
	}

	CuratorFramework client() {
		return this.client;
	}

	ZookeeperCalls calls() {
		return this.calls;
	}

	@SuppressWarnings("deprecation") // Thread.threadId() is Java 19+; the baseline is 17.
	private static String waiterOfThread(String key) {
		return "t" + Thread.currentThread().getId() + "\u0000" + key;
	}

	private static String fairWaiter(String key, String waiterId) {
		return "w" + waiterId + "\u0000" + key;
	}

	private static String intentWaiter(String key, String waiterId) {
		return "x" + waiterId + "\u0000" + key;
	}

	/** Stops listening to the connection; waiters' nodes are deleted. Locks held stay. */
	@Override
	public void close() {
		this.semaphores.close();
		this.latches.close();
		this.session.stop();
		for (String id : List.copyOf(this.queued.keySet())) {
			leave(id);
		}
		this.timers.shutdownNow();
		this.reporter.shutdownNow();
	}

}
