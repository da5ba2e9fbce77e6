package dev.distlock.zookeeper;

import java.time.Duration;

import dev.distlock.DistributedLatch;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.ReleaseSignals;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * Countdown latches in ZooKeeper: one node per latch ({@link ZookeeperNodes#latchPath},
 * apart from locks and semaphores) whose data holds its generation, count, previous
 * generation and whether that one opened, and the participants counted
 * ({@link LatchData}). Every change is a write conditional on the version read, retried
 * on a conflict, so concurrent callers never lose each other's counts.
 *
 * <p>
 * <b>Idempotent counting.</b> A participant is counted by adding its name to the node,
 * once: a retry (by Curator after a lost connection, or by the caller after a timeout)
 * finds the name there and counts nothing.
 *
 * <p>
 * <b>Generations</b> are the zxid of the write that armed them (the create, or the
 * re-arm), so they rise across every latch and across expiry, as ZooKeeper's transaction
 * ids do.
 *
 * <p>
 * <b>Expiry.</b> The node is a TTL node whose TTL is the expiry given when it was
 * created: the server removes it once it has gone that long without a write (every call
 * but a state read writes it), at its next check for expired containers
 * ({@code znode.container.checkIntervalMs}, a minute by default), so a latch outlives its
 * expiry by up to that interval. TTL nodes need a server started with
 * {@code zookeeper.extendedTypesEnabled=true}: a persistent node would outlive an
 * abandoned latch forever, and an ephemeral one would end with its creator's session
 * while the other participants still count. On a server without them, every call that
 * arms a latch fails saying so.
 *
 * <p>
 * <b>Signals.</b> Waiters of a latch share one persistent watch on its node per provider:
 * every write to it (a count, a re-arm) and its removal wake them, and they look again.
 */
final class ZookeeperLatches implements LatchStore {

	private final ZookeeperLockProvider provider;

	private final NodeWatches signals;

	ZookeeperLatches(ZookeeperLockProvider provider) {
		this.provider = provider;
		this.signals = new NodeWatches(provider, (key) -> provider.nodes().latchPath(key));
	}

	@Override
	public ReleaseSignals signals() {
		return this.signals;
	}

	@Override
	public LatchState join(String key, int count, Duration expiry) {
		long deadline = this.provider.calls().deadline();
		while (true) {
			Read read = read(key, deadline);
			if (read == null) {
				LatchState created = create(key, LatchData.armed(count, 0, false), expiry, deadline);
				if (created != null) {
					return created;
				}
				continue;
			}
			// A join restarts the latch's expiry, as every write does.
			LatchState written = write(key, "join", read.data(), read.stat(), deadline);
			if (written != null) {
				return written;
			}
		}
	}

	@Override
	public DistributedLatch.CountDown countDown(String key, long generation, String participant, Duration expiry) {
		long deadline = this.provider.calls().deadline();
		while (true) {
			Read read = read(key, deadline);
			if (read == null || read.data().generation() != generation) {
				return DistributedLatch.CountDown.STALE;
			}
			LatchData data = read.data();
			if (data.counted().contains(participant)) {
				return DistributedLatch.CountDown.ALREADY_COUNTED;
			}
			if (data.remaining() == 0) {
				return DistributedLatch.CountDown.ALREADY_OPEN;
			}
			if (write(key, "count down", data.counting(participant), read.stat(), deadline) != null) {
				return DistributedLatch.CountDown.COUNTED;
			}
		}
	}

	@Override
	public @Nullable LatchState state(String key) {
		Read read = read(key, this.provider.calls().deadline());
		return (read != null) ? read.data().state() : null;
	}

	@Override
	public LatchState rearm(String key, long generation, int count, Duration expiry) {
		long deadline = this.provider.calls().deadline();
		while (true) {
			Read read = read(key, deadline);
			if (read == null) {
				LatchState created = create(key, LatchData.armed(count, 0, false), expiry, deadline);
				if (created != null) {
					return created;
				}
				continue;
			}
			LatchData current = read.data();
			if (current.generation() != generation) {
				return current.state();
			}
			LatchData next = LatchData.armed(count, current.generation(), current.remaining() == 0);
			LatchState written = write(key, "re-arm", next, read.stat(), deadline);
			if (written != null) {
				return written;
			}
		}
	}

	/** The latch's node as read, or null if there is none. */
	private @Nullable Read read(String key, long deadline) {
		CuratorEvent event = call(key, "read", deadline,
				(callback) -> this.provider.client().getData().inBackground(callback).forPath(path(key)));
		KeeperException.Code code = ZookeeperCalls.code(event);
		if (code == KeeperException.Code.NONODE) {
			return null;
		}
		if (code != KeeperException.Code.OK) {
			throw failed(key, "read", event);
		}
		return new Read(LatchData.parse(key, event.getData(), event.getStat()), event.getStat());
	}

	/**
	 * Creates the latch's TTL node.
	 * @return its state, or null if another caller created it first
	 */
	private @Nullable LatchState create(String key, LatchData data, Duration expiry, long deadline) {
		Stat stat = new Stat();
		CuratorEvent event = call(key, "arm", deadline,
				(callback) -> this.provider.client()
					.create()
					.withTtl(Math.max(1, expiry.toMillis()))
					.storingStatIn(stat)
					.creatingParentContainersIfNeeded()
					.withMode(CreateMode.PERSISTENT_WITH_TTL)
					.inBackground(callback)
					.forPath(path(key), data.bytes()));
		KeeperException.Code code = ZookeeperCalls.code(event);
		if (code == KeeperException.Code.NODEEXISTS || code == KeeperException.Code.NONODE) {
			// Another caller armed it, or Curator re-sent this create after a lost reply,
			// or the server removed the idle parent as it was being created: either way
			// the caller reads it again.
			return null;
		}
		if (code == KeeperException.Code.UNIMPLEMENTED) {
			throw new LockBackendException(key,
					"Cannot arm latch '" + key + "': the ZooKeeper server refuses TTL"
							+ " nodes, which latches are kept in so that an abandoned one expires; start it with"
							+ " zookeeper.extendedTypesEnabled=true",
					KeeperException.create(code, path(key)));
		}
		if (code != KeeperException.Code.OK) {
			throw failed(key, "arm", event);
		}
		return data.resolved((event.getStat() != null) ? event.getStat() : stat).state();
	}

	/**
	 * Writes {@code data} over the version read; a generation still to be numbered (a
	 * re-arm's) is this write's zxid.
	 * @return the state written, or null if the node changed (or went) since the read
	 */
	private @Nullable LatchState write(String key, String operation, LatchData data, Stat read, long deadline) {
		CuratorEvent event = call(key, operation, deadline,
				(callback) -> this.provider.client()
					.setData()
					.withVersion(read.getVersion())
					.inBackground(callback)
					.forPath(path(key), data.bytes()));
		KeeperException.Code code = ZookeeperCalls.code(event);
		if (code == KeeperException.Code.BADVERSION || code == KeeperException.Code.NONODE) {
			return null;
		}
		if (code != KeeperException.Code.OK) {
			throw failed(key, operation, event);
		}
		return data.resolved(event.getStat()).state();
	}

	private CuratorEvent call(String key, String operation, long deadline, ZookeeperCalls.Operation op) {
		return this.provider.calls().call(key, operation + " latch", deadline, op);
	}

	private static LockBackendException failed(String key, String operation, CuratorEvent event) {
		KeeperException cause = KeeperException.create(ZookeeperCalls.code(event), event.getPath());
		return new LockBackendException(key,
				"ZooKeeper failed to " + operation + " latch '" + key + "': " + cause.getMessage(), cause);
	}

	private String path(String key) {
		return this.provider.nodes().latchPath(key);
	}

	void close() {
		this.signals.close();
	}

	/** A latch's node: its data, and the stat its conditional write checks. */
	private record Read(LatchData data, Stat stat) {
	}

}
