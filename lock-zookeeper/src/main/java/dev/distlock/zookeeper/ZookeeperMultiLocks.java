package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.api.CuratorEvent;
import org.jspecify.annotations.Nullable;

/**
 * Multi-key locks in ZooKeeper: one attempt creates the caller's node in every key's
 * queue (an ephemeral sequential {@code -lock-} node, as a plain lock of that key makes)
 * in one ZooKeeper transaction, and holds the keys when each of its nodes stands first,
 * so a multi-key holder and a plain holder of one of its keys exclude each other, and
 * each key's fencing token is its node's {@code czxid}. ZooKeeper orders the transaction
 * as one write: of two callers whose keys overlap, the one whose transaction went first
 * stands before the other in every queue they share, so they never each find the other in
 * the way.
 *
 * <p>
 * <b>All or nothing, and never waiting.</b> The attempt first reads every key's queue
 * (one round trip for all), and answers {@code Busy} naming the lowest key in use without
 * making a node. The transaction that makes its nodes makes none if another multi-key
 * caller's transaction on one of the keys came after that read: the attempt reads again.
 * Otherwise, if any node it makes does not stand first, the attempt deletes every node it
 * created before it answers {@code Busy} naming the lowest busy key, so a multi-key
 * caller never holds some keys while it waits for others, and callers locking overlapping
 * sets cannot deadlock. A failure (a store error, the store timeout, an interrupt, a lost
 * reply) deletes what was created, with Curator's guaranteed delete, waiting for it
 * within the store timeout; a transaction whose reply comes after the caller gave up has
 * its nodes deleted when it comes, and one whose reply was lost with the connection has
 * its nodes looked for and deleted.
 *
 * <p>
 * <b>Waking.</b> A multi-key waiter keeps no node between attempts (it would hold its
 * place in one key's queue while it holds none of the others). Once the core has
 * subscribed to the busy key's releases, the attempt that finds it busy watches the one
 * node that holds it, the first in its queue: that node's end is what the waiter waits
 * for, and it wakes only this waiter's thread.
 *
 * <p>
 * <b>Loss.</b> Every key's handle is tracked by the session: the session's end reports
 * each key lost.
 */
final class ZookeeperMultiLocks {

	private static final Log logger = LogFactory.getLog(ZookeeperMultiLocks.class);

	/**
	 * How many times an attempt reads the queues again after another multi-key caller's
	 * transaction came first.
	 */
	private static final int MAX_RACES = 3;

	private final ZookeeperLockProvider provider;

	ZookeeperMultiLocks(ZookeeperLockProvider provider) {
		this.provider = provider;
	}

	/** One attempt at every key of a {@code MULTI} request, within the store timeout. */
	LockAttempt tryLockAll(LockRequest request) {
		long deadline = this.provider.calls().deadline();
		long sessionId = this.provider.session().current(request.key(), "acquire", deadline);
		long leaseMillis = Math.max(1, request.leaseTime().toMillis());
		List<String> keys = request.keys();
		List<String> parents = new ArrayList<>(keys.size());
		for (String key : keys) {
			parents.add(this.provider.nodes().parentPath(key));
		}
		// Keys seen in use are busy without a node made: an attempt's nodes, however
		// briefly there, would stand in the way of every caller behind them on any of
		// its keys.
		List<ZookeeperNodes.Looked> queues = this.provider.nodes()
			.queues(request.key(), parents, ZookeeperNodes.QUEUE, deadline);
		List<ZookeeperNodes.Queued> queued = null;
		for (int race = 1; queued == null; race++) {
			List<Integer> versions = new ArrayList<>(keys.size());
			for (int i = 0; i < keys.size(); i++) {
				List<String> queue = queues.get(i).queue();
				if (!queue.isEmpty()) {
					String key = keys.get(i);
					long lease = busyHint(key, parents.get(i) + "/" + queue.get(0), request.waiting(), deadline);
					return new LockAttempt.Busy(Duration.ofMillis(lease), key);
				}
				versions.add(queues.get(i).version());
			}
			// Another multi-key caller's transaction since the read makes nothing of
			// this one's, which looks at the queues as they stand after it; after a few
			// such races the nodes are made all the same, so that the attempt ends.
			ZookeeperNodes.Made made = this.provider.nodes()
				.createAllOwnedAndQueues(request.key(), parents, (race < MAX_RACES) ? versions : null,
						ZookeeperNodes.NODE_NAME, ZookeeperNodes.QUEUE, leaseMillis, sessionId, deadline);
			queued = made.nodes();
			if (queued == null) {
				queues = Objects.requireNonNull(made.raced());
			}
		}
		List<Taken> taken = new ArrayList<>(keys.size());
		for (int i = 0; i < keys.size(); i++) {
			ZookeeperNodes.Created created = queued.get(i).created();
			taken.add(new Taken(keys.get(i), created.path(), created.stat().getCzxid()));
		}
		boolean answered = false;
		try {
			List<@Nullable String> holders = new ArrayList<>(keys.size());
			for (int i = 0; i < keys.size(); i++) {
				holders.add(holderBefore(keys.get(i), parents.get(i), taken.get(i).path(), queued.get(i).queue()));
			}
			int busy = IntStream.range(0, keys.size()).filter((i) -> holders.get(i) != null).findFirst().orElse(-1);
			String busyHolder = (busy >= 0) ? holders.get(busy) : null;
			if (busyHolder != null) {
				String key = keys.get(busy);
				long lease = busyHint(key, busyHolder, request.waiting(), deadline);
				giveBack(taken, holders, deadline);
				answered = true;
				return new LockAttempt.Busy(Duration.ofMillis(lease), key);
			}
			LockAttempt held = held(taken, sessionId, leaseMillis);
			answered = true;
			return held;
		}
		finally {
			if (!answered) {
				giveBack(taken, null, deadline);
			}
		}
	}

	/**
	 * The node that holds {@code key} if the caller's node does not stand first in the
	 * key's queue; null if it does.
	 */
	private static @Nullable String holderBefore(String key, String parent, String path, List<String> queue) {
		int index = queue.indexOf(path.substring(parent.length() + 1));
		if (index < 0) {
			throw new LockBackendException(key, "Cannot acquire lock '" + key + "': its node " + path
					+ " is gone (its session ended, or it was deleted)", new IllegalStateException());
		}
		return (index == 0) ? null : parent + "/" + queue.get(0);
	}

	/**
	 * The busy key's holder's lease, as a hint; for a waiter subscribed to the key's
	 * releases, the holder's node is watched for the key's subscribers, which wakes them
	 * when it goes (at once if it went before the watch was set).
	 */
	private long busyHint(String key, String holder, boolean waiting, long deadline) {
		WaitingPlaces subscribers = waiting ? this.provider.locks().subscribers(key) : null;
		if (subscribers == null) {
			return this.provider.nodes().leaseOf(key, holder, null, deadline);
		}
		// The watcher clears it when it fires.
		subscribers.watchedHolder = holder;
		long lease = this.provider.nodes().leaseOf(key, holder, subscribers.holderWatcher, deadline);
		if (lease == 0) {
			// Gone before the watch was set: no event will come, so look again now.
			subscribers.watchedHolder = null;
			subscribers.wake();
			return 1;
		}
		return lease;
	}

	/** Every key was taken: one handle per key, in the request's order, each tracked. */
	private LockAttempt held(List<Taken> taken, long sessionId, long leaseMillis) {
		List<LockHandle> handles = new ArrayList<>(taken.size());
		for (Taken node : taken) {
			ZookeeperLockHandle handle = new ZookeeperLockHandle(this.provider, node.key(), node.path(), node.czxid(),
					sessionId, leaseMillis);
			handle.startLease();
			this.provider.session().track(handle);
			handles.add(handle);
		}
		return new LockAttempt.AcquiredAll(handles);
	}

	/**
	 * Deletes the nodes of an attempt that found a key busy, or failed, all at once,
	 * waiting for them until the attempt's deadline, so that the keys are free when the
	 * caller hears of it: also when it was interrupted (the interrupt is kept for it),
	 * which promises that no key is held. A delete not answered by then goes on in the
	 * background (Curator's guaranteed delete) until it succeeds or the session ends.
	 * @param holders for each node, the node before it in its queue (null if it stood
	 * first), or null if not known
	 */
	private void giveBack(List<Taken> taken, @Nullable List<@Nullable String> holders, long deadline) {
		List<CompletableFuture<CuratorEvent>> deletes = new ArrayList<>(taken.size());
		for (Taken node : taken) {
			deletes.add(this.provider.calls()
				.send((callback) -> this.provider.client()
					.delete()
					.guaranteed()
					.inBackground(callback)
					.forPath(node.path())));
		}
		for (int i = 0; i < deletes.size(); i++) {
			awaitQuietly(deletes.get(i), taken.get(i).path(), deadline);
			if (holders != null && holders.get(i) == null) {
				// This JVM's waiters on a key this attempt held for a moment, that watch
				// no
				// node, are told, as after a release.
				this.provider.locks().released(taken.get(i).key(), taken.get(i).path());
			}
		}
	}

	private static void awaitQuietly(CompletableFuture<CuratorEvent> delete, String path, long deadline) {
		boolean interrupted = Thread.interrupted();
		try {
			while (true) {
				try {
					delete.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
					return;
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("A node of a multi-key attempt is still being deleted: " + path, ex);
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** A key's node created by the attempt. */
	private record Taken(String key, String path, long czxid) {
	}

}
