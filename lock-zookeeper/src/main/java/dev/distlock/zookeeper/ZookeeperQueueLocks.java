package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * Plain, fair and read-write locks in ZooKeeper: one ephemeral sequential node per
 * attempt under a parent node per key, the lowest node holding the lock, as Curator's
 * {@code InterProcessMutex} does.
 *
 * <p>
 * <b>One attempt.</b> An attempt creates the caller's node and lists the key's queue.
 * First in line: the lock is granted, if the node belongs to the current session (a node
 * of an expired session may linger for a moment; CURATOR-604). Not first: a caller that
 * will not wait deletes its node and hears {@code Busy}; a caller that waits (it has
 * {@linkplain ReleaseSignals#subscribe subscribed} to the key's releases, or queues
 * fairly) keeps its node across attempts and watches the one node just ahead of it, so a
 * release wakes this provider's waiters of the key, not every client's, and clients take
 * the lock in the order they queued. A waiter whose last look found nothing in its way
 * but the node it watches holds as soon as that node's deletion is heard, without listing
 * the queue again: a new node's sequence is above every node already queued, so nothing
 * can have come before the waiter's node since. A subscriber's place is one of its key's
 * {@link WaitingPlaces}, not tied to a thread: a wait that holds no thread makes its
 * attempts on any worker. Closing the subscription, or {@link #leaveQueue}, deletes a
 * waiter's node.
 *
 * <p>
 * <b>Read-write locks.</b> Readers' nodes ({@code <uuid>-read-<sequence>}) join the same
 * queue as writers' ({@code <uuid>-lock-<sequence>}, the plain lock's), in one sequence:
 * a writer holds when its node is the first, a reader when no writer's node stands before
 * it. A waiting writer's node holds back every reader that comes after it (its intent),
 * so readers cannot starve it; a waiting reader watches the nearest writer's node before
 * it.
 */
final class ZookeeperQueueLocks {

	private final ZookeeperLockProvider provider;

	private final ZookeeperNodes nodes;

	/**
	 * Places of waiters known by an id, by key and waiter ("w" + fair waiter id, "x" +
	 * writer id).
	 */
	private final Map<String, QueuedNode> queued = new ConcurrentHashMap<>();

	/** The subscribers of each key and their places. */
	private final Map<String, WaitingPlaces> waiting = new ConcurrentHashMap<>();

	private final Consumer<QueuedNode> drop = this::drop;

	private final ReleaseSignals signals = new ReleaseSignals() {

		@Override
		public Subscription subscribe(String key, Runnable onRelease) {
			ZookeeperQueueLocks.this.waiting.compute(key, (k, existing) -> {
				WaitingPlaces places = (existing != null) ? existing : new WaitingPlaces(key);
				places.add(onRelease);
				return places;
			});
			return () -> unsubscribe(key, onRelease);
		}

		@Override
		public boolean isListening() {
			return ZookeeperQueueLocks.this.provider.session().isConnected();
		}

		@Override
		public boolean isListening(String key) {
			WaitingPlaces places = ZookeeperQueueLocks.this.waiting.get(key);
			return isListening() && places != null && places.isWatching();
		}

	};

	ZookeeperQueueLocks(ZookeeperLockProvider provider, ZookeeperNodes nodes) {
		this.provider = provider;
		this.nodes = nodes;
	}

	/** The releases of the keys' locks: a subscriber's thread keeps its place. */
	ReleaseSignals signals() {
		return this.signals;
	}

	LockAttempt tryLock(String key, Duration leaseTime, boolean waiting) {
		return tryOnce(key, leaseTime, waiting, false);
	}

	/**
	 * A reader's node joins the key's one queue: it is granted when no writer's node
	 * (held or waiting) stands before it. A reader that waits keeps its node, watching
	 * the nearest writer's node before it.
	 */
	LockAttempt tryLockShared(String key, Duration leaseTime, boolean waiting) {
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
	LockAttempt tryLockExclusive(String key, Duration leaseTime, String waiterId, Duration intentTimeout) {
		WaitingPlaces places = this.waiting.get(key);
		QueuedNode place = (places != null) ? places.claim(false) : null;
		if (place != null) {
			return attemptOn(key, leaseTime, place, false);
		}
		return keptAttempt(key, leaseTime, intentWaiter(key, waiterId), intentTimeout, false);
	}

	void withdrawIntent(String key, String waiterId) {
		leave(intentWaiter(key, waiterId));
	}

	LockAttempt tryLockFair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		return keptAttempt(key, leaseTime, fairWaiter(key, waiterId), queueTimeout, true);
	}

	void leaveQueue(String key, String waiterId) {
		leave(fairWaiter(key, waiterId));
	}

	/**
	 * One attempt of a caller that waits subscribed to the key's releases (on a free
	 * place of the key's subscribers, kept while they wait) or of one that does not wait
	 * (or finds no free place).
	 */
	private LockAttempt tryOnce(String key, Duration leaseTime, boolean waiting, boolean read) {
		WaitingPlaces places = waiting ? this.waiting.get(key) : null;
		QueuedNode place = (places != null) ? places.claim(read) : null;
		if (place == null) {
			return attempt(key, leaseTime, null, read, true);
		}
		return attemptOn(key, leaseTime, place, read);
	}

	/** An attempt on a subscriber's place, which {@link WaitingPlaces#claim} locked. */
	private LockAttempt attemptOn(String key, Duration leaseTime, QueuedNode place, boolean read) {
		try {
			return attempt(key, leaseTime, place, read, true);
		}
		finally {
			place.lock.unlock();
		}
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
			QueuedNode node = this.queued.computeIfAbsent(id, (k) -> new QueuedNode(key, () -> wake(key)));
			node.lock.lock();
			try {
				if (this.queued.get(id) != node) {
					// The place lapsed between the lookup and the lock: a node created on
					// it now would be in no one's map, and never deleted.
					continue;
				}
				return keptAttempt(key, leaseTime, id, node, timeout, behindWriters);
			}
			finally {
				node.lock.unlock();
			}
		}
	}

	/**
	 * An attempt on a waiter's place, which is still mapped: the caller holds its lock. A
	 * place not granted lapses {@code timeout} after the attempt, unless the waiter asks
	 * again first; the lapse of an earlier attempt, due meanwhile, does nothing.
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
				node.lapse = this.provider.schedule(() -> lapse(id, node, attempt), Math.max(1, timeout.toMillis()));
			}
		}
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
		long deadline = this.provider.calls().deadline();
		long sessionId = this.provider.session().current(key, "acquire", deadline);
		long leaseMillis = Math.max(1, leaseTime.toMillis());
		String parent = this.nodes.parentPath(key);
		if (node != null && node.path != null && (node.sessionId != sessionId || node.read != read)) {
			// A place taken in a session that has since ended, or for the other side of
			// the key. The server removes an ended session's node only when it expires
			// that session, which a client-side expiry does not tell it (up to a session
			// timeout later): until then this waiter would queue behind its own old node.
			// Deleted here, within this call's deadline; a failure leaves the path, so
			// the next attempt tries again.
			this.nodes.delete(key, node.path, node.sessionId);
			node.forget();
		}
		if (node != null && node.path != null && node.clear) {
			// The last node in this one's way went since the queue was read: nothing
			// can have come before this node since, so it holds without a new read.
			String path = node.path;
			long czxid = node.czxid;
			node.forget();
			return granted(key, path, czxid, sessionId, leaseMillis);
		}
		String path;
		long czxid;
		@Nullable List<String> queue = null;
		if (node != null && node.path != null) {
			path = node.path;
			czxid = node.czxid;
		}
		else {
			ZookeeperNodes.Queued queued = this.nodes.createOwnedAndQueue(key, parent,
					read ? ZookeeperNodes.READ_NAME : ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE, leaseMillis,
					sessionId, deadline);
			ZookeeperNodes.Created created = queued.created();
			queue = queued.queue();
			path = created.path();
			czxid = created.stat().getCzxid();
			if (node != null) {
				node.forget();
				node.path = path;
				node.czxid = czxid;
				node.sessionId = sessionId;
				node.read = read;
			}
		}
		try {
			return positionOf(key, parent, path, czxid, sessionId, leaseMillis, node, read, behindWriters,
					(queue != null) ? queue : this.nodes.queue(key, parent, deadline), deadline);
		}
		catch (RuntimeException ex) {
			if (node == null) {
				this.nodes.deleteInBackground(path);
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
			@Nullable QueuedNode node, boolean read, boolean behindWriters, List<String> queue, long deadline) {
		String name = path.substring(parent.length() + 1);
		int index = queue.indexOf(name);
		if (index < 0) {
			if (node != null) {
				node.forget();
			}
			throw new LockBackendException(key, "Cannot acquire lock '" + key + "': its queued node " + path
					+ " is gone (its session ended, or it was deleted)", new IllegalStateException());
		}
		int writerBefore = lastWriterBefore(queue, index);
		int blocker = read ? writerBefore : index - 1;
		if (blocker < 0) {
			if (node != null) {
				node.forget();
			}
			return granted(key, path, czxid, sessionId, leaseMillis);
		}
		if (node == null || (!behindWriters && writerBefore >= 0)) {
			long holderLease = this.nodes.leaseOf(key, parent + "/" + queue.get(read ? blocker : 0), null, deadline);
			this.nodes.delete(key, path, sessionId);
			if (node != null) {
				node.forget();
			}
			return new LockAttempt.Busy(Duration.ofMillis(holderLease));
		}
		String ahead = parent + "/" + queue.get(blocker);
		// Before the watch is set, so that its event finds it. A reader waits only for
		// writers; a writer for every node before it.
		boolean onlyOne = read ? lastWriterBefore(queue, blocker) < 0 : blocker == 0;
		node.lastInTheWay = onlyOne ? ahead : null;
		if (!ahead.equals(node.watched)) {
			node.watched = ahead;
			long lease = this.nodes.leaseOf(key, ahead, node.watcher, deadline);
			if (lease == 0) {
				// Gone before the watch was set: no event will come, so look again now
				// (and hold, if it was the last in the way).
				node.watched = null;
				if (onlyOne) {
					node.clear = true;
				}
				node.wake.run();
				lease = 1;
			}
			node.aheadLeaseMillis = lease;
		}
		return new LockAttempt.Busy(Duration.ofMillis(node.aheadLeaseMillis));
	}

	private LockAttempt granted(String key, String path, long czxid, long sessionId, long leaseMillis) {
		ZookeeperLockHandle handle = new ZookeeperLockHandle(this.provider, key, path, czxid, sessionId, leaseMillis);
		handle.startLease();
		this.provider.session().track(handle);
		return new LockAttempt.Acquired(handle);
	}

	/** The index of the last writer's node before {@code index}, or -1. */
	private static int lastWriterBefore(List<String> queue, int index) {
		for (int i = index - 1; i >= 0; i--) {
			if (queue.get(i).contains(ZookeeperNodes.NODE_NAME)) {
				return i;
			}
		}
		return -1;
	}

	/**
	 * A handle of this provider released lock {@code key} (node {@code path}): if a place
	 * on the key watches no node (between attempts, or the place a subscriber's attempt
	 * took the key on), this provider's waiters on the key are told at once. A place that
	 * watches the node waits for ZooKeeper to signal its end.
	 */
	void released(String key, String path) {
		if (!path.startsWith(this.nodes.parentPath(key) + "/")) {
			return;
		}
		WaitingPlaces places = this.waiting.get(key);
		boolean unwatched = places != null && places.anyUnwatched();
		for (QueuedNode node : this.queued.values()) {
			unwatched |= node.key.equals(key) && node.watched == null;
		}
		if (unwatched) {
			wake(key);
		}
	}

	/** This provider's waiters on {@code key} look again. */
	private void wake(String key) {
		WaitingPlaces places = this.waiting.get(key);
		if (places != null) {
			places.wake();
		}
	}

	/**
	 * The subscribers of {@code key}'s releases, if it has any: a multi-key waiter's
	 * watch is kept on them, so that the core's wait sees it listening.
	 */
	@Nullable WaitingPlaces subscribers(String key) {
		return this.waiting.get(key);
	}

	/**
	 * A subscriber leaves: its callback goes, and one place of the key's, with its node.
	 */
	private void unsubscribe(String key, Runnable onRelease) {
		WaitingPlaces places = this.waiting.get(key);
		if (places == null) {
			return;
		}
		places.remove(onRelease, this.drop);
		this.waiting.computeIfPresent(key, (k, current) -> current.isEmpty() ? null : current);
	}

	/** A waiter known by its id gives up its place: its node, if any, is deleted. */
	private void leave(String id) {
		QueuedNode node;
		while ((node = this.queued.get(id)) != null) {
			CompletableFuture<?> deleted = null;
			node.lock.lock();
			try {
				if (this.queued.remove(id, node)) {
					deleted = drop(node);
				}
			}
			finally {
				node.lock.unlock();
			}
			if (deleted != null) {
				// Another client's waiter looking right after must not find the node:
				// ZooKeeper orders one session's calls, not two sessions'.
				ZookeeperNodes.awaitQuietly(deleted, this.provider.calls().deadline());
				return;
			}
		}
	}

	/**
	 * A kept place lapses: the waiter did not ask again within its timeout after attempt
	 * number {@code attempt}. Under the place's lock, so that it never runs during an
	 * attempt, and only if no later attempt ran.
	 */
	private void lapse(String id, QueuedNode node, long attempt) {
		node.lock.lock();
		try {
			if (node.attempts == attempt && this.queued.remove(id, node)) {
				drop(node);
			}
		}
		finally {
			node.lock.unlock();
		}
	}

	/**
	 * Deletes a place's node, if any, without waiting; the caller holds its lock and has
	 * given it up.
	 */
	private CompletableFuture<?> drop(QueuedNode node) {
		if (node.lapse != null) {
			node.lapse.cancel(false);
			node.lapse = null;
		}
		if (node.path == null) {
			return CompletableFuture.completedFuture(null);
		}
		CompletableFuture<?> deleted = this.nodes.deleteInBackground(node.path);
		node.forget();
		return deleted;
	}

	private static String fairWaiter(String key, String waiterId) {
		return "w" + waiterId + "\u0000" + key;
	}

	private static String intentWaiter(String key, String waiterId) {
		return "x" + waiterId + "\u0000" + key;
	}

	/** Every waiter's node is deleted. */
	void close() {
		for (String id : List.copyOf(this.queued.keySet())) {
			leave(id);
		}
		for (WaitingPlaces places : List.copyOf(this.waiting.values())) {
			places.clear(this.drop);
		}
	}

}
