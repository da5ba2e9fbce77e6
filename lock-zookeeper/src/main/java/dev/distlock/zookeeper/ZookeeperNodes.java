package dev.distlock.zookeeper;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.SetDataRequest;
import org.jspecify.annotations.Nullable;

/**
 * The ZooKeeper nodes behind every primitive of a {@link ZookeeperLockProvider}: where a
 * key's nodes live, and the calls that create, list, read, update and delete them, each
 * within the store timeout.
 *
 * <p>
 * <b>Lost replies.</b> Nodes are created with Curator's protection (a unique name prefix,
 * looked for again after a connection loss), and an attempt whose caller gives up (store
 * timeout, interrupt) deletes the node its create made whenever that reply comes.
 */
final class ZookeeperNodes {

	private static final Log logger = LogFactory.getLog(ZookeeperNodes.class);

	/** The marker in the name of a writer's node: a plain lock's, a write lock's. */
	static final String NODE_NAME = "-lock-";

	/** The marker in the name of a reader's node, in the same queue as the writers'. */
	static final String READ_NAME = "-read-";

	/** The markers of a lock key's queue: its writers' and readers' nodes. */
	static final List<String> QUEUE = List.of(NODE_NAME, READ_NAME);

	/** A version that any node's matches: a write that checks none. */
	static final int NO_VERSION = -1;

	/**
	 * What a multi-key transaction writes in its keys' parents: only the version counts.
	 */
	private static final byte[] NO_DATA = new byte[0];

	private final CuratorFramework client;

	private final String basePath;

	/**
	 * Whether the ACL of a key's node refused a multi-key transaction's write of it; its
	 * transactions then leave the versions alone.
	 */
	private volatile boolean parentsUnwritable;

	private final ZookeeperCalls calls;

	/**
	 * @param basePath the parent of every key's node, {@code ""} for the root
	 */
	ZookeeperNodes(CuratorFramework client, String basePath, ZookeeperCalls calls) {
		this.client = client;
		this.basePath = basePath;
		this.calls = calls;
	}

	/**
	 * Creates the caller's node, as {@link #create}, checks that the current session owns
	 * it (a node of an ended session is going away, CURATOR-604), and reads the nodes
	 * under {@code parent} whose name holds one of {@code markers} as they stood once the
	 * node was created. That read goes out right behind the create, without waiting for
	 * its reply, and ZooKeeper answers one session's requests in the order sent, so it
	 * sees the new node and every node before it: one round trip for both. When the
	 * create had to be sent again (its key's parent was missing), they are read once more
	 * after it.
	 */
	Queued createOwnedAndQueue(String key, String parent, String nodeName, List<String> markers, long leaseMillis,
			long sessionId, long deadline) {
		List<CompletableFuture<CuratorEvent>> queueRead = new ArrayList<>(1);
		Created created = owned(key, create(key, parent, nodeName, leaseMillis, deadline, queueRead), sessionId);
		String name = created.path().substring(parent.length() + 1);
		try {
			List<String> queue = queueOf(key, parent, markers,
					this.calls.await(key, "acquire", queueRead.get(0), deadline));
			return new Queued(created, queue.contains(name) ? queue : children(key, parent, markers, deadline));
		}
		catch (RuntimeException ex) {
			// Gone before the caller hears of the failure (within the deadline, an
			// interrupt set aside for it), as a multi-key caller is promised.
			CompletableFuture<CuratorEvent> deleted = deleteInBackground(created.path());
			Interrupts.setAside(() -> awaitQuietly(deleted, deadline));
			throw ex;
		}
	}

	/**
	 * Creates the caller's nodes ({@code <uuid><nodeName><sequence>}, ephemeral and
	 * sequential, recording the lease) under every one of {@code parents} in one
	 * ZooKeeper transaction, and reads each parent's nodes whose name holds one of
	 * {@code markers} right behind it, in the same round trip. The transaction makes all
	 * of the nodes or none, and ZooKeeper orders it as one write: of two callers whose
	 * parents overlap, the one whose transaction went first stands before the other in
	 * every queue they share.
	 *
	 * <p>
	 * A reply lost with the connection leaves it unknown whether the nodes were made:
	 * they are looked for by their unique prefix and deleted in the background, and the
	 * caller is told of the failure. A reply that comes after the caller gave up has its
	 * nodes deleted when it comes. Parents the servers have removed (idle containers) are
	 * created again and the transaction sent again.
	 *
	 * <p>
	 * The transaction also raises the data version of every parent, and, given the
	 * versions read before it, makes nothing if one has changed since: another multi-key
	 * caller's transaction came first, and this one would only make nodes to delete
	 * again, standing for a moment in the way of every caller of its keys.
	 * @param key the request's key, for messages
	 * @param versions the parents' data versions as read before, or null to make the
	 * nodes whatever the versions
	 * @return one queued node per parent, in the order of {@code parents}; or, with
	 * nothing made if a parent's version is not the one given, the queues read right
	 * after the transaction
	 */
	Made createAllOwnedAndQueues(String key, List<String> parents, @Nullable List<Integer> versions, String nodeName,
			List<String> markers, long leaseMillis, long sessionId, long deadline) {
		String prefix = UUID.randomUUID() + nodeName;
		byte[] lease = Long.toString(leaseMillis).getBytes(StandardCharsets.US_ASCII);
		@Nullable List<Integer> expected = versions;
		for (int attempt = 1;; attempt++) {
			List<Op> ops = new ArrayList<>(2 * parents.size());
			for (String parent : parents) {
				ops.add(create2(parent + "/" + prefix, lease));
			}
			for (int i = 0; i < parents.size() && !this.parentsUnwritable; i++) {
				int version = (expected != null) ? expected.get(i) : NO_VERSION;
				ops.add(setData(parents.get(i), version));
			}
			CompletableFuture<Multi> reply = multi(ops);
			List<CompletableFuture<CuratorEvent>> reads = readChildren(parents);
			Multi answer;
			try {
				answer = this.calls.await(key, "acquire", reply, deadline);
			}
			catch (LockBackendException ex) {
				CompletableFuture<?> undone = reply.thenCompose((late) -> undo(late, parents, prefix));
				if (Thread.currentThread().isInterrupted()) {
					// The caller stopped waiting, not ZooKeeper: the nodes are gone
					// before it is told that no key is held.
					Interrupts.setAside(() -> awaitQuietly(undone, deadline));
				}
				throw ex;
			}
			if (answer.code() == KeeperException.Code.OK) {
				return new Made(queued(key, parents, markers, answer, reads, sessionId, deadline), null);
			}
			if (answer.code() == KeeperException.Code.BADVERSION) {
				return new Made(null, looked(key, parents, markers, reads, deadline));
			}
			if (answer.code() == KeeperException.Code.NOAUTH && failedOp(answer) >= parents.size()) {
				// The keys' nodes let this client create under them but not write them
				// (their ACL): the transaction goes without the versions, which only
				// spare it races.
				logger.debug("A node of lock '" + key + "' refuses writes (its ACL): multi-key"
						+ " attempts go on without raising versions");
				this.parentsUnwritable = true;
				continue;
			}
			if (answer.code() == KeeperException.Code.CONNECTIONLOSS) {
				undo(answer, parents, prefix);
			}
			if (answer.code() != KeeperException.Code.NONODE || attempt == 5) {
				KeeperException cause = KeeperException.create(answer.code());
				throw new LockBackendException(key,
						"ZooKeeper failed to acquire lock '" + key + "': " + cause.getMessage(), cause);
			}
			createParents(key, parents, deadline);
			// Parents made again start from version 0.
			expected = null;
		}
	}

	/**
	 * A write of a parent's data that raises its version, if it is {@code version}
	 * ({@link #NO_VERSION}: whatever it is); with the namespace the client gives its own
	 * writes.
	 */
	private Op setData(String parent, int version) {
		try {
			SetDataRequest request = (SetDataRequest) this.client.transactionOp()
				.setData()
				.withVersion(version)
				.forPath(parent, NO_DATA)
				.get()
				.toRequestRecord();
			return Op.setData(request.getPath(), request.getData(), request.getVersion());
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not build the write of " + parent, ex);
		}
	}

	/**
	 * A create that returns the new node's stat, with the ACL and namespace the client
	 * gives its own creates.
	 */
	private Op create2(String path, byte[] data) {
		try {
			CreateRequest request = (CreateRequest) this.client.transactionOp()
				.create()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
				.forPath(path, data)
				.get()
				.toRequestRecord();
			return Op.create(request.getPath(), request.getData(),
					CreateOptions.newBuilder(request.getAcl(), CreateMode.EPHEMERAL_SEQUENTIAL).build());
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not build the create of " + path, ex);
		}
	}

	/**
	 * Sends one transaction of {@code ops} on the client's current connection, with no
	 * retry: Curator would send a transaction cut short by a connection loss again,
	 * making its nodes twice.
	 */
	private CompletableFuture<Multi> multi(List<Op> ops) {
		CompletableFuture<Multi> reply = new CompletableFuture<>();
		try {
			this.client.getZookeeperClient()
				.getZooKeeper()
				.multi(ops,
						(rc, path, context, results) -> reply
							.complete(new Multi(KeeperException.Code.get(rc), (results != null) ? results : List.of())),
						null);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.debug("Could not send the creates of a multi-key lock", ex);
			reply.complete(new Multi(KeeperException.Code.CONNECTIONLOSS, List.of()));
		}
		return reply;
	}

	/** The index of the operation that failed a transaction, or -1 if not told. */
	private static int failedOp(Multi answer) {
		for (int i = 0; i < answer.results().size(); i++) {
			if (answer.results().get(i) instanceof OpResult.ErrorResult error
					&& error.getErr() == answer.code().intValue()) {
				return i;
			}
		}
		return -1;
	}

	/** A transaction's result code and, when it succeeded, each create's result. */
	private record Multi(KeeperException.Code code, List<OpResult> results) {
	}

	/**
	 * Deletes what a transaction whose caller will not use it made: its nodes when it
	 * succeeded; when its reply was lost with the connection, the nodes with its prefix,
	 * if any.
	 */
	private CompletableFuture<Void> undo(Multi multi, List<String> parents, String prefix) {
		if (multi.code() == KeeperException.Code.OK) {
			List<String> made = new ArrayList<>(parents.size());
			for (int i = 0; i < parents.size(); i++) {
				made.add(pathIn(parents.get(i), multi.results().get(i)));
			}
			return deleteAllInBackground(made);
		}
		if (multi.code() != KeeperException.Code.CONNECTIONLOSS) {
			return CompletableFuture.completedFuture(null);
		}
		List<CompletableFuture<Void>> found = new ArrayList<>(parents.size());
		for (String parent : parents) {
			found.add(readChildren(parent).thenCompose((children) -> {
				List<String> made = new ArrayList<>(1);
				if (ZookeeperCalls.code(children) == KeeperException.Code.OK) {
					for (String child : children.getChildren()) {
						if (child.startsWith(prefix)) {
							made.add(parent + "/" + child);
						}
					}
				}
				return deleteAllInBackground(made);
			}));
		}
		return CompletableFuture.allOf(found.toArray(CompletableFuture[]::new));
	}

	/** The path, without the client's namespace, of the node a create made. */
	private static String pathIn(String parent, OpResult result) {
		return parent + "/" + ZKPaths.getNodeFromPath(((OpResult.CreateResult) result).getPath());
	}

	/**
	 * The nodes a transaction made, each checked to be the current session's, with its
	 * key's queue; every node is deleted if any check fails.
	 */
	private List<Queued> queued(String key, List<String> parents, List<String> markers, Multi answer,
			List<CompletableFuture<CuratorEvent>> reads, long sessionId, long deadline) {
		List<Created> created = new ArrayList<>(parents.size());
		for (int i = 0; i < parents.size(); i++) {
			OpResult.CreateResult result = (OpResult.CreateResult) answer.results().get(i);
			created.add(new Created(pathIn(parents.get(i), result), result.getStat()));
		}
		try {
			List<Queued> queued = new ArrayList<>(parents.size());
			for (int i = 0; i < parents.size(); i++) {
				String parent = parents.get(i);
				Created node = created.get(i);
				long owner = node.stat().getEphemeralOwner();
				if (owner != sessionId) {
					throw new LockBackendException(key,
							"Cannot acquire lock '" + key + "': its nodes were created by session "
									+ Long.toHexString(owner) + ", not by the current session "
									+ Long.toHexString(sessionId),
							new IllegalStateException());
				}
				List<String> queue = queueOf(key, parent, markers,
						this.calls.await(key, "acquire", reads.get(i), deadline));
				String name = node.path().substring(parent.length() + 1);
				queued.add(new Queued(node, queue.contains(name) ? queue : children(key, parent, markers, deadline)));
			}
			return queued;
		}
		catch (RuntimeException ex) {
			CompletableFuture<Void> deleted = deleteAllInBackground(created.stream().map(Created::path).toList());
			Interrupts.setAside(() -> awaitQuietly(deleted, deadline));
			throw ex;
		}
	}

	/** Creates {@code parents} that are missing, as containers, within the deadline. */
	private void createParents(String key, List<String> parents, long deadline) {
		List<CompletableFuture<CuratorEvent>> creates = new ArrayList<>(parents.size());
		for (String parent : parents) {
			creates.add(this.calls.send((callback) -> this.client.create()
				.creatingParentContainersIfNeeded()
				.withMode(CreateMode.CONTAINER)
				.inBackground(callback)
				.forPath(parent)));
		}
		for (CompletableFuture<CuratorEvent> create : creates) {
			CuratorEvent event = this.calls.await(key, "acquire", create, deadline);
			KeeperException.Code code = ZookeeperCalls.code(event);
			if (code != KeeperException.Code.OK && code != KeeperException.Code.NODEEXISTS) {
				throw ZookeeperCalls.failed(key, "acquire", event);
			}
		}
	}

	private Created owned(String key, Created created, long sessionId) {
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
	 * Creates the caller's node ({@code _c_<uuid><nodeName><sequence>}: Curator's
	 * protected name, whose unique prefix finds the node again after a lost reply;
	 * ephemeral and sequential) recording the lease. If the caller gives up before the
	 * reply, the node that the create made is deleted when the reply comes. A key's
	 * parent that the servers remove (an idle container) between Curator creating it and
	 * creating the node under it is created again.
	 */
	private Created create(String key, String parent, String nodeName, long leaseMillis, long deadline,
			List<CompletableFuture<CuratorEvent>> queueRead) {
		for (int attempt = 1;; attempt++) {
			Stat stat = new Stat();
			String prefix = parent + "/" + nodeName.substring(1);
			CompletableFuture<CuratorEvent> reply = this.calls.send((callback) -> this.client.create()
				.storingStatIn(stat)
				.creatingParentContainersIfNeeded()
				.withProtection()
				.withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
				.inBackground(callback)
				.forPath(prefix, Long.toString(leaseMillis).getBytes(StandardCharsets.US_ASCII)));
			queueRead.clear();
			queueRead.add(readChildren(parent));
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

	/** A node that an attempt created, and its key's queue read right after. */
	record Queued(Created created, List<String> queue) {
	}

	/**
	 * A lock key's queue: its writers' and readers' nodes, in sequence order (one
	 * sequence per parent, so the order is total).
	 */
	List<String> queue(String key, String parent, long deadline) {
		return children(key, parent, QUEUE, deadline);
	}

	/**
	 * The queues of {@code parents} (the nodes whose name holds one of {@code markers}),
	 * read together: one round trip for all; each with its parent's data version, which
	 * every multi-key transaction raises ({@link #createAllOwnedAndQueues}).
	 */
	List<Looked> queues(String key, List<String> parents, List<String> markers, long deadline) {
		return looked(key, parents, markers, readChildren(parents), deadline);
	}

	private List<Looked> looked(String key, List<String> parents, List<String> markers,
			List<CompletableFuture<CuratorEvent>> reads, long deadline) {
		List<Looked> queues = new ArrayList<>(parents.size());
		for (int i = 0; i < parents.size(); i++) {
			CuratorEvent read = this.calls.await(key, "acquire", reads.get(i), deadline);
			int version = (ZookeeperCalls.code(read) == KeeperException.Code.OK && read.getStat() != null)
					? read.getStat().getVersion() : NO_VERSION;
			queues.add(new Looked(queueOf(key, parents.get(i), markers, read), version));
		}
		return queues;
	}

	/**
	 * A key's queue as read, and its parent's data version then ({@link #NO_VERSION} if
	 * the parent was missing).
	 */
	record Looked(List<String> queue, int version) {
	}

	/**
	 * What a multi-key transaction came to: the nodes it made, or the queues read right
	 * after it when it made none (another multi-key caller's came first).
	 */
	record Made(@Nullable List<Queued> nodes, @Nullable List<Looked> raced) {
	}

	/** Sends a read of {@code parent}'s children. */
	private CompletableFuture<CuratorEvent> readChildren(String parent) {
		return this.calls.send((callback) -> this.client.getChildren().inBackground(callback).forPath(parent));
	}

	/** Sends a read of each of {@code parents}' children, one after another. */
	private List<CompletableFuture<CuratorEvent>> readChildren(List<String> parents) {
		List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>(parents.size());
		for (String parent : parents) {
			reads.add(readChildren(parent));
		}
		return reads;
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
		return queueOf(key, parent, markers, this.calls.await(key, "acquire", readChildren(parent), deadline));
	}

	private static List<String> queueOf(String key, String parent, List<String> markers, CuratorEvent event) {
		if (ZookeeperCalls.code(event) == KeeperException.Code.NONODE) {
			return List.of();
		}
		if (ZookeeperCalls.code(event) != KeeperException.Code.OK) {
			throw ZookeeperCalls.failed(key, "acquire", event);
		}
		// Each name's sequence found once, not in every comparison of the sort.
		return event.getChildren()
			.stream()
			.map((child) -> new Numbered(sequence(child, markers), child))
			.filter((node) -> node.sequence() != null)
			.sorted(Comparator.comparing(Numbered::sequence))
			.map(Numbered::name)
			.toList();
	}

	/** A child's name and its sequence number (null: not one of the queue's nodes). */
	private record Numbered(@Nullable String sequence, String name) {
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
	 * The lease recorded in a node, watching it with {@code watcher} if given.
	 * @return the lease in milliseconds, or 0 if the node is gone
	 */
	long leaseOf(String key, String path, @Nullable Watcher watcher, long deadline) {
		CuratorEvent event = this.calls.call(key, "acquire", deadline,
				(callback) -> ((watcher != null) ? this.client.getData().usingWatcher(watcher) : this.client.getData())
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
	 * @param owner the session that created the node
	 * @return false if the node was gone before this delete: another client deleted it
	 * (by hand, say), or its session ended and took it, so the lock it stood for was lost
	 */
	boolean delete(String key, String path, long owner) {
		long deadline = this.calls.deadline();
		CompletableFuture<KeeperException.Code> first = deleteOnce(path);
		KeeperException.Code code;
		try {
			code = this.calls.await(key, "release", first, deadline);
		}
		catch (LockBackendException ex) {
			deleteIfStillThere(first, path);
			throw ex;
		}
		return afterFirstDelete(key, path, owner, code, deadline);
	}

	/**
	 * {@link #delete} without blocking: the first try's answer completes it, on the
	 * client's event thread; a first try whose fate is unknown is followed up on
	 * {@code executor}.
	 */
	CompletableFuture<Boolean> deleteAsync(String key, String path, long owner, Executor executor) {
		long deadline = this.calls.deadline();
		CompletableFuture<KeeperException.Code> first = deleteOnce(path);
		return first.copy()
			.orTimeout(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
			.handle((code, failure) -> {
				if (failure != null) {
					deleteIfStillThere(first, path);
					throw new CompletionException(this.calls.timedOut(key, "release", failure));
				}
				if (code == KeeperException.Code.OK || code == KeeperException.Code.NONODE) {
					return CompletableFuture.completedFuture(code == KeeperException.Code.OK);
				}
				return CompletableFuture.supplyAsync(() -> afterFirstDelete(key, path, owner, code, deadline),
						executor);
			})
			.thenCompose((answer) -> answer);
	}

	/** A first delete that was given up on is followed by Curator's, if it failed. */
	private void deleteIfStillThere(CompletableFuture<KeeperException.Code> first, String path) {
		first.whenComplete((late, failure) -> {
			if (late != KeeperException.Code.OK && late != KeeperException.Code.NONODE) {
				deleteInBackground(path);
			}
		});
	}

	private boolean afterFirstDelete(String key, String path, long owner, KeeperException.Code code, long deadline) {
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
		// succeeds or the session ends.
		CuratorEvent event = this.calls.call(key, "release", deadline,
				(callback) -> this.client.delete().guaranteed().inBackground(callback).forPath(path));
		KeeperException.Code retried = ZookeeperCalls.code(event);
		if (retried == KeeperException.Code.OK) {
			return true;
		}
		if (retried == KeeperException.Code.NONODE) {
			// While the owner's session lives, only a delete removes its node: the first
			// try's work. Once that session has ended (it expired while the client could
			// not hear, say), its end may have taken the node, before this release too,
			// and another client the lock.
			return sessionIs(owner);
		}
		throw ZookeeperCalls.failed(key, "release", event);
	}

	/**
	 * Whether the client's current handle is one of session {@code owner}; false if that
	 * cannot be read. Handles only follow one another: asked after a reply, a yes means
	 * that the handle that answered was of that session.
	 */
	private boolean sessionIs(long owner) {
		Long live = liveSession();
		return live != null && live == owner;
	}

	/**
	 * Whether the client has moved on from session {@code owner} to a handle of another
	 * (one not connected yet included: Curator replaces a handle only once its session
	 * expired or was given up); false if that cannot be read.
	 */
	boolean movedOn(long owner) {
		Long live = liveSession();
		return live != null && live != owner;
	}

	/** The session of the client's current handle (0 before it connects), if readable. */
	private @Nullable Long liveSession() {
		try {
			return this.client.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			logger.debug("Could not read the ZooKeeper session id", ex);
			return null;
		}
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

	/**
	 * {@link #deleteInBackground} of every one of {@code paths}, answered when all are.
	 */
	private CompletableFuture<Void> deleteAllInBackground(List<String> paths) {
		return CompletableFuture.allOf(paths.stream().map(this::deleteInBackground).toArray(CompletableFuture[]::new));
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
	static @Nullable Void awaitQuietly(CompletableFuture<?> future, long deadline) {
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

}
