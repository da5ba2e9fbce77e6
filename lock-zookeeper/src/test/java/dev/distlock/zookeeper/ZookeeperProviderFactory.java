package dev.distlock.zookeeper;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fault.FaultRun;
import dev.distlock.harness.fuzz.LockHolder;
import dev.distlock.spi.LockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ZookeeperLockProvider} over a Curator client of its own, from the server's
 * connect string, in the test JVM or in a child JVM. The session is the lease: where the
 * settings name a lease (a holder JVM's {@link LockHolder#LEASE_MILLIS}, a fault run's
 * {@link FaultRun#LEASE_MILLIS} unless the fault keeps the client's defaults) the session
 * times out after it; otherwise the client keeps Curator's defaults (the server may
 * shorten the session to its maximum, twenty ticks).
 */
public final class ZookeeperProviderFactory implements ProviderFactory {

	/** Setting: the ZooKeeper connect string ({@code 127.0.0.1:port}). */
	static final String CONNECT = "zookeeper.connect";

	private @Nullable CuratorFramework client;

	private @Nullable ZookeeperLockProvider provider;

	/** The nodes its session owned when it closed. */
	private int leftAtClose;

	@Override
	public LockProvider create(Map<String, String> settings) {
		if (this.provider != null) {
			throw new IllegalStateException("One provider per factory");
		}
		CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
			.connectString(WorkerArgs.require(settings, CONNECT))
			.retryPolicy(new ExponentialBackoffRetry(100, 5));
		Integer session = sessionTimeoutMillis(settings);
		if (session != null) {
			builder.sessionTimeoutMs(session);
		}
		CuratorFramework client = builder.build();
		this.client = client;
		client.start();
		try {
			if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Not connected to ZooKeeper at " + settings.get(CONNECT));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		this.provider = new ZookeeperLockProvider(client);
		return this.provider;
	}

	private static @Nullable Integer sessionTimeoutMillis(Map<String, String> settings) {
		if (settings.containsKey(LockHolder.LEASE_MILLIS)) {
			return (int) WorkerArgs.number(settings, LockHolder.LEASE_MILLIS);
		}
		if (settings.containsKey(FaultRun.LEASE_MILLIS)
				&& !Boolean.parseBoolean(settings.getOrDefault(FaultRun.CLIENT_DEFAULTS, "false"))) {
			return (int) WorkerArgs.number(settings, FaultRun.LEASE_MILLIS);
		}
		return null;
	}

	/**
	 * Nodes under the base path still owned by this client's session once every holder
	 * and waiter of this JVM is done: a lock, permit or queued node that nobody will
	 * delete until the session ends (a create whose reply was lost and whose node was
	 * never found again, a waiter's node left behind). Deletes sent in the background (a
	 * waiter leaving, a caller that gave up) get a store timeout to land; what is left
	 * then is printed to standard error.
	 */
	@Override
	public int leftOver() {
		CuratorFramework current = this.client;
		return (current != null) ? ownedNodes(current) : this.leftAtClose;
	}

	private static int ownedNodes(CuratorFramework current) {
		long deadline = System.nanoTime() + ZookeeperLockProvider.DEFAULT_STORE_TIMEOUT.toNanos();
		List<String> owned = List.of();
		Exception failure = null;
		do {
			try {
				owned = current.getZookeeperClient()
					.getZooKeeper()
					.getEphemerals(ZookeeperLockProvider.DEFAULT_BASE_PATH);
				failure = null;
				if (owned.isEmpty()) {
					return 0;
				}
			}
			catch (Exception ex) {
				// reconnecting after a fault: the question is what is left once it
				// answers
				failure = ex;
			}
			// a bounded poll of a condition, not a tight loop against the server
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
		}
		while (System.nanoTime() - deadline < 0);
		if (failure != null) {
			System.err.println("Could not list the nodes of this client's session: " + failure);
			return 1;
		}
		System.err.println("Nodes left owned by this client's session: " + owned);
		return owned.size();
	}

	/** Closes the provider and its client, once. */
	@Override
	public void close() {
		CuratorFramework current = this.client;
		if (current != null && this.provider != null && current.getZookeeperClient().isConnected()) {
			this.leftAtClose = ownedNodes(current);
		}
		if (this.provider != null) {
			this.provider.close();
			this.provider = null;
		}
		if (this.client != null) {
			this.client.close();
			this.client = null;
		}
	}

}
