package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;

import dev.distlock.LockBackendException;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;

/**
 * Semaphores in ZooKeeper: each permit is an ephemeral sequential node under the
 * semaphore's own parent ({@link ZookeeperLockProvider#semaphorePath}), named
 * {@code <uuid>-<permits>-permit-<sequence>}, and the first {@code permits} nodes in
 * sequence order hold the permits. An attempt creates its node and lists the parent; a
 * node among the first {@code permits} is granted, any other is deleted at once and the
 * attempt is busy.
 *
 * <p>
 * <b>Never more than N holders.</b> A node is granted only when fewer than N nodes stand
 * before it, and nodes only ever leave the line before it: of k holders at once, the last
 * one created saw the k-1 others before it, so k is at most N.
 *
 * <p>
 * <b>Leak-free.</b> A permit is its node, owned by the holder's session: a holder that
 * dies loses its session and its node with it, so its permit comes back after the session
 * timeout without anyone's help; a holder whose lease time passes unrenewed deletes its
 * node itself ({@link ZookeeperLockHandle}). Only the handle that created a node deletes
 * it, once.
 *
 * <p>
 * <b>Fencing.</b> A permit's token is its node's {@code czxid}, unique and rising across
 * permits, keys and sessions.
 *
 * <p>
 * <b>The count</b> is in every node's name, so a caller declaring another count while
 * nodes of the semaphore exist fails with {@link PermitCountMismatchException} naming
 * both.
 *
 * <p>
 * <b>Signals.</b> Waiters of a semaphore share one persistent watch on its parent per
 * provider: every permit node that goes wakes every waiter of this JVM, so N freed
 * permits wake N waiters (and more, who find none left and wait on).
 */
final class ZookeeperSemaphores {

	private static final Log logger = LogFactory.getLog(ZookeeperSemaphores.class);

	static final String PERMIT = "-permit-";

	private final ZookeeperLockProvider provider;

	private final Map<String, KeyWatch> watches = new ConcurrentHashMap<>();

	ZookeeperSemaphores(ZookeeperLockProvider provider) {
		this.provider = provider;
	}

	LockAttempt tryAcquire(String key, int permits, Duration leaseTime) {
		if (permits < 1) {
			throw new IllegalArgumentException(
					"A semaphore needs at least 1 permit, but '" + key + "' was asked for with " + permits);
		}
		ZookeeperCalls calls = this.provider.calls();
		long deadline = calls.deadline();
		long sessionId = this.provider.session().current(key, "acquire", deadline);
		long leaseMillis = Math.max(1, leaseTime.toMillis());
		String parent = this.provider.semaphorePath(key);
		ZookeeperLockProvider.Created created = this.provider.createOwned(key, parent, "-" + permits + PERMIT,
				leaseMillis, sessionId, deadline);
		String path = created.path();
		try {
			List<String> line = this.provider.children(key, parent, PERMIT, deadline);
			for (String node : line) {
				int declared = countOf(node);
				if (declared != permits) {
					this.provider.deleteInBackground(path);
					throw new PermitCountMismatchException(key, declared, permits);
				}
			}
			int index = line.indexOf(path.substring(parent.length() + 1));
			if (index < 0) {
				throw new LockBackendException(key, "Cannot acquire a permit of semaphore '" + key + "': its node "
						+ path + " is gone (its session ended, or it was deleted)", new IllegalStateException());
			}
			if (index < permits) {
				ZookeeperLockHandle handle = new ZookeeperLockHandle(this.provider, key, path,
						created.stat().getCzxid(), sessionId, leaseMillis);
				handle.startLease();
				this.provider.session().track(handle);
				return new LockAttempt.Acquired(handle);
			}
			long firstLease = this.provider.leaseOf(key, parent + "/" + line.get(0), null, deadline);
			this.provider.delete(key, path);
			return new LockAttempt.Busy(Duration.ofMillis(firstLease));
		}
		catch (PermitCountMismatchException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			this.provider.deleteInBackground(path);
			throw ex;
		}
	}

	/** The permit count in a node's name: {@code <uuid>-<permits>-permit-<sequence>}. */
	static int countOf(String node) {
		String head = node.substring(0, node.lastIndexOf(PERMIT));
		return Integer.parseInt(head.substring(head.lastIndexOf('-') + 1));
	}

	/** Wakes a semaphore's waiters whenever one of its nodes goes. */
	ReleaseSignals signals() {
		return new ReleaseSignals() {

			@Override
			public Subscription subscribe(String key, Runnable onRelease) {
				KeyWatch watch = ZookeeperSemaphores.this.watches.compute(key, (k, existing) -> {
					KeyWatch current = (existing != null) ? existing : new KeyWatch(key);
					current.listeners.add(onRelease);
					return current;
				});
				watch.start();
				return () -> unsubscribe(key, onRelease);
			}

			@Override
			public boolean isListening() {
				return ZookeeperSemaphores.this.provider.session().isConnected();
			}

			@Override
			public boolean isListening(String key) {
				KeyWatch watch = ZookeeperSemaphores.this.watches.get(key);
				return isListening() && watch != null && watch.listening;
			}

		};
	}

	private void unsubscribe(String key, Runnable onRelease) {
		this.watches.computeIfPresent(key, (k, watch) -> {
			watch.listeners.remove(onRelease);
			if (watch.listeners.isEmpty()) {
				watch.stop();
				return null;
			}
			return watch;
		});
	}

	void close() {
		this.watches.values().forEach(KeyWatch::stop);
		this.watches.clear();
	}

	/** One persistent watch on a semaphore's parent, shared by its waiters. */
	private final class KeyWatch implements Watcher {

		private final String key;

		private final String path;

		final Set<Runnable> listeners = new CopyOnWriteArraySet<>();

		private boolean started;

		volatile boolean listening;

		KeyWatch(String key) {
			this.key = key;
			this.path = ZookeeperSemaphores.this.provider.semaphorePath(key);
		}

		synchronized void start() {
			if (this.started) {
				return;
			}
			this.started = true;
			try {
				ZookeeperSemaphores.this.provider.client()
					.watchers()
					.add()
					.withMode(AddWatchMode.PERSISTENT)
					.inBackground((client, event) -> {
						if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
							this.listening = true;
							// A permit freed before the watch was set wakes nobody: look
							// again.
							this.listeners.forEach(Runnable::run);
						}
						else {
							logger.debug("Could not watch semaphore '" + this.key + "' (code " + event.getResultCode()
									+ "); its waiters poll at their retry interval");
						}
					})
					.usingWatcher(this)
					.forPath(this.path);
			}
			catch (Exception ex) {
				logger.debug("Could not watch semaphore '" + this.key + "'; its waiters poll", ex);
			}
		}

		void stop() {
			this.listening = false;
			try {
				ZookeeperSemaphores.this.provider.client()
					.watchers()
					.remove(this)
					.quietly()
					.inBackground()
					.forPath(this.path);
			}
			catch (Exception ex) {
				logger.debug("Could not remove the watch of semaphore '" + this.key + "'", ex);
			}
		}

		@Override
		public void process(org.apache.zookeeper.WatchedEvent event) {
			if (event.getType() == Event.EventType.NodeChildrenChanged
					|| event.getType() == Event.EventType.NodeDeleted) {
				this.listeners.forEach(Runnable::run);
			}
		}

	}

}
