package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.fault.FamilyFaultWorkload;
import dev.distlock.harness.fault.FaultTarget;
import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.jspecify.annotations.Nullable;

/**
 * The servers of one ZooKeeper fault run: a ZooKeeper server (100 ms tick, so a
 * lease-long session is allowed), in this JVM or, for a class that kills it with
 * {@code kill -9}, in a JVM of its own ({@link ZookeeperServerJvm}); clients reach it
 * through a {@link TcpProxy} (byte for byte: the fault proxy of lock-test-harness frames
 * Redis replies); and the resource server (a redis-server), which no fault touches. The
 * harness looks at the lock nodes directly, past the proxy.
 */
final class ZookeeperFaultTarget implements FaultTarget {

	/** The parent of the semaphores' parents, under the base path. */
	private static final String SEMAPHORES = "~semaphores";

	private final @Nullable TestingServer inProcess;

	private final @Nullable ZookeeperServerJvm ownJvm;

	private final String serverAddress;

	private final RedisServer resource = RedisServer.start();

	final TcpProxy clients;

	private ZookeeperFaultTarget(@Nullable TestingServer inProcess, @Nullable ZookeeperServerJvm ownJvm, int port) {
		this.inProcess = inProcess;
		this.ownJvm = ownJvm;
		this.serverAddress = "127.0.0.1:" + port;
		this.clients = TcpProxy.start(port);
	}

	/** A server in this JVM. */
	static ZookeeperFaultTarget inProcess() {
		TestingServer server = TestZookeeper.server(ZookeeperStoreFixture.TICK_MILLIS);
		return new ZookeeperFaultTarget(server, null, server.getPort());
	}

	/** A server in a JVM of its own, which {@link #killServer()} kills. */
	static ZookeeperFaultTarget inOwnJvm() {
		ZookeeperServerJvm server = ZookeeperServerJvm.start();
		return new ZookeeperFaultTarget(null, server, server.port());
	}

	/** {@code kill -9} of the server's JVM. */
	void killServer() {
		serverJvm().kill();
	}

	/** Starts the server's JVM again, on its port and with its data. */
	void restartServer() {
		serverJvm().restart();
	}

	private ZookeeperServerJvm serverJvm() {
		if (this.ownJvm == null) {
			throw new IllegalStateException("The server runs in the test JVM: start the target with inOwnJvm()");
		}
		return this.ownJvm;
	}

	@Override
	public Class<? extends ProviderFactory> providerFactory() {
		return ZookeeperProviderFactory.class;
	}

	@Override
	public Class<? extends ResourceFactory> resourceFactory() {
		return RedisResources.class;
	}

	/**
	 * The clients' proxy and the resource server; and for the family's workload, permit
	 * holds of up to 50 ms: a ZooKeeper acquire writes the server's log, so holds as
	 * short as Redis's would seldom meet inside in a short run on a loaded machine.
	 */
	@Override
	public Map<String, String> settings() {
		Map<String, String> settings = ZookeeperStoreFixture.settings(this.resource, this.clients.connectString());
		settings.put(FamilyFaultWorkload.PERMIT_HOLD_MILLIS, "50");
		return settings;
	}

	/**
	 * Lock, permit and latch nodes still under the base path once every holder and waiter
	 * is gone, waiting for the sessions of dead clients to expire (a lease) and a margin,
	 * in which the latches' TTL (two leases after their last change) runs out too; the
	 * warm-up key's parent and the semaphores' parents may stay until the container
	 * reaper runs, their nodes may not.
	 */
	@Override
	public int leftInStore(Duration lease, StringBuilder detail) {
		long deadline = System.nanoTime() + lease.plusSeconds(3).toNanos();
		try (CuratorFramework admin = TestZookeeper.client(this.serverAddress)) {
			List<String> nodes = List.of();
			Exception failure = null;
			do {
				try {
					nodes = lockNodes(admin);
					failure = null;
					if (nodes.isEmpty()) {
						return 0;
					}
				}
				catch (Exception ex) {
					// a fault class may leave the server electing or the admin session
					// reconnecting; the question is what is left once it answers again
					failure = ex;
				}
				// a bounded poll of a condition: a tight loop of getChildren on two
				// cores starves the server it asks
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
			while (System.nanoTime() - deadline < 0);
			if (failure != null) {
				throw new IllegalStateException("Could not list the lock nodes within " + lease.plusSeconds(3),
						failure);
			}
			detail.append(", in ZooKeeper ").append(nodes);
			return nodes.size();
		}
	}

	private static List<String> lockNodes(CuratorFramework admin) throws Exception {
		String base = ZookeeperLockProvider.DEFAULT_BASE_PATH;
		List<String> nodes = new ArrayList<>();
		if (admin.checkExists().forPath(base) == null) {
			return nodes;
		}
		for (String key : admin.getChildren().forPath(base)) {
			for (String node : children(admin, base + "/" + key)) {
				if (key.equals(SEMAPHORES)) {
					// the semaphores' parents, whose children are the permits
					for (String permit : children(admin, base + "/" + key + "/" + node)) {
						nodes.add(key + "/" + node + "/" + permit);
					}
				}
				else {
					// a lock key's queue, or a latch (a TTL node, gone once it expires)
					nodes.add(key + "/" + node);
				}
			}
		}
		return nodes;
	}

	private static List<String> children(CuratorFramework admin, String path) throws Exception {
		try {
			return admin.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			// reaped meanwhile
			return List.of();
		}
	}

	@Override
	public void close() {
		try {
			this.clients.close();
			if (this.inProcess != null) {
				this.inProcess.close();
			}
			if (this.ownJvm != null) {
				this.ownJvm.close();
			}
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			this.resource.close();
		}
	}

}
