package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.contract.Conditions;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.ZooKeeper;

/**
 * Real ZooKeeper servers (curator-test, in-process) on free loopback ports only, and
 * Curator clients with Curator's default settings.
 */
final class TestZookeeper {

	static {
		// Idle parents (container nodes) are reaped within a fifth of a second, not a
		// minute, so tests can watch it happen.
		System.setProperty("znode.container.checkIntervalMs", "200");
		System.setProperty("zookeeper.admin.enableServer", "false");
		// TTL nodes, which countdown latches are kept in.
		System.setProperty("zookeeper.extendedTypesEnabled", "true");
	}

	private TestZookeeper() {
	}

	/** A server's spec: client, quorum and election ports on 127.0.0.1. */
	static InstanceSpec spec(int serverId) {
		return spec(serverId, -1);
	}

	/** As {@link #spec(int)}, with the server's tick ({@code -1}: the default). */
	static InstanceSpec spec(int serverId, int tickMillis) {
		return new InstanceSpec(null, -1, -1, -1, true, serverId, tickMillis, -1, Map.of("clientPortAddress",
				"127.0.0.1", "admin.enableServer", "false", "4lw.commands.whitelist", "srvr"), "127.0.0.1");
	}

	/**
	 * A single server's spec on a given port and data directory, which the server keeps
	 * when it stops (so that it can start again on them).
	 */
	static InstanceSpec spec(java.io.File dataDirectory, int port, int tickMillis) {
		return new InstanceSpec(dataDirectory, port, -1, -1, false, -1, tickMillis, -1, Map.of("clientPortAddress",
				"127.0.0.1", "admin.enableServer", "false", "4lw.commands.whitelist", "srvr"), "127.0.0.1");
	}

	/** A started single server. */
	static TestingServer server() {
		return server(-1);
	}

	/**
	 * A started single server with the given tick: sessions may then be as short as two
	 * ticks.
	 */
	static TestingServer server(int tickMillis) {
		try {
			return new TestingServer(spec(-1, tickMillis), true);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not start a ZooKeeper test server", ex);
		}
	}

	/** A started ensemble of {@code size} servers. */
	static TestingCluster cluster(int size) {
		// A server that finds no leader backs off between election rounds, doubling
		// up to this bound (60 s unless set): one unlucky round would then outlast a
		// test's wait for the survivors' leader. The ensemble runs in this JVM, and the
		// bound is read when its election first runs.
		System.setProperty("zookeeper.fastleader.maxNotificationInterval", "2000");
		List<InstanceSpec> specs = new ArrayList<>();
		for (int id = 1; id <= size; id++) {
			specs.add(spec(id));
		}
		TestingCluster cluster = new TestingCluster(specs);
		try {
			cluster.start();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not start a ZooKeeper test cluster", ex);
		}
		return cluster;
	}

	/**
	 * A template's defaults for the tests: the starter's (30 s lease, auto-renew, 100 ms
	 * fallback poll, fail on exit), with the given wait.
	 */
	static LockOptions templateDefaults(Duration waitTime) {
		return LockOptions.builder()
			.waitTime(waitTime)
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.onLeaseLost(OnLeaseLost.FAIL_ON_EXIT)
			.fair(false)
			.build();
	}

	/**
	 * The server's role in its ensemble ("leader", "follower", "standalone"), or "down".
	 */
	static String mode(InstanceSpec spec) {
		try (java.net.Socket socket = new java.net.Socket("127.0.0.1", spec.getPort())) {
			socket.setSoTimeout(5000);
			socket.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
			socket.getOutputStream().flush();
			String reply = new String(socket.getInputStream().readAllBytes(),
					java.nio.charset.StandardCharsets.US_ASCII);
			int at = reply.indexOf("Mode: ");
			return (at < 0) ? "down" : reply.substring(at + 6).lines().findFirst().orElse("down").trim();
		}
		catch (java.io.IOException ex) {
			return "down";
		}
	}

	/**
	 * A started client with Curator's default timeouts (60 s session, 15 s connection)
	 * and the retry policy the auto-configuration uses.
	 */
	static CuratorFramework client(String connectString) {
		return started(CuratorFrameworkFactory.newClient(connectString, new ExponentialBackoffRetry(100, 5)));
	}

	/** A started client whose session times out after {@code sessionTimeoutMillis}. */
	static CuratorFramework client(String connectString, int sessionTimeoutMillis) {
		return started(CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs(sessionTimeoutMillis)
			.connectionTimeoutMs(sessionTimeoutMillis)
			.retryPolicy(new ExponentialBackoffRetry(100, 5))
			.build());
	}

	/**
	 * A started client, as {@link #client(String)}, whose ZooKeeper handles run the hook
	 * in {@code beforeDelete}, once, with the node's path, just before they send the next
	 * asynchronous delete: so that a test can end a session at that exact step.
	 */
	static CuratorFramework client(String connectString, AtomicReference<Consumer<String>> beforeDelete) {
		return started(CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.retryPolicy(new ExponentialBackoffRetry(100, 5))
			.zookeeperFactory((connect, timeout, watcher, canBeReadOnly) -> new ZooKeeper(connect, timeout, watcher,
					canBeReadOnly) {

				@Override
				public void delete(String path, int version, AsyncCallback.VoidCallback callback, Object context) {
					Consumer<String> hook = beforeDelete.getAndSet(null);
					if (hook != null) {
						hook.accept(path);
					}
					super.delete(path, version, callback, context);
				}

			})
			.build());
	}

	/**
	 * Ends a client's session on the server, as an expiry does: another connection takes
	 * the session over and closes it, so its ephemeral nodes go at once.
	 */
	static void expireSession(CuratorFramework client) throws Exception {
		ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
		ZooKeeper killer = new ZooKeeper(client.getZookeeperClient().getCurrentConnectionString(), 2000, (event) -> {
		}, zk.getSessionId(), zk.getSessionPasswd());
		Conditions.await("the session is taken over", Duration.ofSeconds(10),
				() -> killer.getState() == ZooKeeper.States.CONNECTED);
		killer.close();
	}

	private static CuratorFramework started(CuratorFramework client) {
		client.start();
		try {
			if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Not connected to ZooKeeper");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		return client;
	}

}
