package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.distlock.spi.CallThreads;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;

/**
 * Locks in ZooKeeper over the application's {@link CuratorFramework}: one ephemeral
 * sequential node per attempt under a parent node per key, the lowest node holding the
 * lock, as Curator's {@code InterProcessMutex} does; the session as the lease.
 *
 * <p>
 * This class is the store's entry: it says which kinds it supports, hands each request to
 * the class of its primitive, and owns the shared threads and the session. Who does what:
 * <ul>
 * <li>plain, fair and read-write locks, one queue of nodes per key:
 * {@link ZookeeperQueueLocks};</li>
 * <li>semaphores: {@link ZookeeperSemaphores};</li>
 * <li>multi-key locks, each key's node as a plain lock's, all or none:
 * {@link ZookeeperMultiLocks};</li>
 * <li>countdown latches, TTL nodes of their own: {@link ZookeeperLatches};</li>
 * <li>the nodes themselves (paths, create with Curator's protection, list, read, delete):
 * {@link ZookeeperNodes}; calls bounded by the store timeout: {@link ZookeeperCalls};
 * watches shared per node: {@link NodeWatches};</li>
 * <li>a held lock and its lease: {@link ZookeeperLockHandle}; the session as every lock's
 * lease: {@link SessionGuard}.</li>
 * </ul>
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

	private final CuratorFramework client;

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

	/** Calls of waiters that hold no thread: Curator's synchronous calls block theirs. */
	private final CallThreads callThreads = new CallThreads("distlock-zookeeper-call-", 16);

	private final SessionGuard session;

	private final ZookeeperNodes nodes;

	private final ZookeeperQueueLocks locks;

	private final ZookeeperSemaphores semaphores;

	private final ReleaseSignals permitSignals;

	private final ZookeeperMultiLocks multiLocks;

	private final ZookeeperLatches latches;

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
		this.calls = new ZookeeperCalls(storeTimeout);
		this.session = new SessionGuard(client, this.timers);
		this.nodes = new ZookeeperNodes(client, basePath.equals("/") ? "" : basePath, this.calls);
		this.locks = new ZookeeperQueueLocks(this, this.nodes);
		this.semaphores = new ZookeeperSemaphores(this);
		this.permitSignals = this.semaphores.signals();
		this.multiLocks = new ZookeeperMultiLocks(this);
		this.latches = new ZookeeperLatches(this);
		this.session.start();
	}

	/**
	 * The releases of plain, fair and read-write locks ({@link ZookeeperQueueLocks}): a
	 * waiter watches the one node just ahead of it.
	 */
	@Override
	public ReleaseSignals releaseSignals() {
		return this.locks.signals();
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
			case EXCLUSIVE -> (waiterId == null) ? this.locks.tryLock(key, leaseTime, request.waiting())
					: this.locks.tryLockExclusive(key, leaseTime, waiterId, request.queueTimeout());
			case FAIR ->
				this.locks.tryLockFair(key, leaseTime, Objects.requireNonNull(waiterId), request.queueTimeout());
			case SHARED -> this.locks.tryLockShared(key, leaseTime, request.waiting());
			case PERMITS -> this.semaphores.tryAcquire(key, request.permits(), leaseTime);
			case MULTI -> this.multiLocks.tryLockAll(request);
		};
	}

	@Override
	public void withdraw(LockRequest request) {
		String waiterId = Objects.requireNonNull(request.waiterId());
		if (request.kind() == LockKind.FAIR) {
			this.locks.leaveQueue(request.key(), waiterId);
		}
		else {
			this.locks.withdrawIntent(request.key(), waiterId);
		}
	}

	/**
	 * One persistent watch per semaphore waited on; every permit freed wakes its waiters.
	 */
	@Override
	public ReleaseSignals permitSignals() {
		return this.permitSignals;
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

	/**
	 * Curator's calls block: those of waits that hold no thread run on threads of the
	 * store's.
	 */
	@Override
	public Optional<Executor> callExecutor() {
		return Optional.of(this.callThreads);
	}

	/** Stops listening to the connection; waiters' nodes are deleted. Locks held stay. */
	@Override
	public void close() {
		this.semaphores.close();
		this.latches.close();
		this.session.stop();
		this.locks.close();
		this.timers.shutdownNow();
		this.reporter.shutdownNow();
		this.callThreads.close();
	}

	ZookeeperNodes nodes() {
		return this.nodes;
	}

	ZookeeperQueueLocks locks() {
		return this.locks;
	}

	SessionGuard session() {
		return this.session;
	}

	CuratorFramework client() {
		return this.client;
	}

	ZookeeperCalls calls() {
		return this.calls;
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

}
