package dev.distlock.zookeeper;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.distlock.spi.LockProvider;
import dev.distlock.testsupport.ProviderFactory;
import dev.distlock.testsupport.WorkerArgs;
import dev.distlock.testsupport.fault.FaultRun;
import dev.distlock.testsupport.fuzz.LockHolder;
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

	/** Closes the provider and its client, once. */
	@Override
	public void close() {
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
