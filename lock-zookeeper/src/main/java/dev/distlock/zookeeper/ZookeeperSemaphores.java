package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;

import dev.distlock.LockBackendException;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.ReleaseSignals;

/**
 * Semaphores in ZooKeeper: each permit is an ephemeral sequential node under the
 * semaphore's own parent ({@link ZookeeperNodes#semaphorePath}), named
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
 * provider ({@link NodeWatches}): every permit node that goes wakes every waiter of this
 * JVM, so N freed permits wake N waiters (and more, who find none left and wait on).
 */
final class ZookeeperSemaphores {

	static final String PERMIT = "-permit-";

	private final ZookeeperLockProvider provider;

	private final NodeWatches signals;

	ZookeeperSemaphores(ZookeeperLockProvider provider) {
		this.provider = provider;
		this.signals = new NodeWatches(provider, (key) -> provider.nodes().semaphorePath(key));
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
		String parent = this.provider.nodes().semaphorePath(key);
		ZookeeperNodes.Queued queued = this.provider.nodes()
			.createOwnedAndQueue(key, parent, "-" + permits + PERMIT, List.of(PERMIT), leaseMillis, sessionId,
					deadline);
		ZookeeperNodes.Created created = queued.created();
		String path = created.path();
		try {
			List<String> line = queued.queue();
			for (String node : line) {
				int declared = countOf(node);
				if (declared != permits) {
					this.provider.nodes().deleteInBackground(path);
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
			long firstLease = this.provider.nodes().leaseOf(key, parent + "/" + line.get(0), null, deadline);
			this.provider.nodes().delete(key, path, sessionId);
			return new LockAttempt.Busy(Duration.ofMillis(firstLease));
		}
		catch (PermitCountMismatchException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			this.provider.nodes().deleteInBackground(path);
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
		return this.signals;
	}

	void close() {
		this.signals.close();
	}

}
