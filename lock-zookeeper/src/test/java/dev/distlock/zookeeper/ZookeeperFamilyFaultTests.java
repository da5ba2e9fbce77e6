package dev.distlock.zookeeper;

import java.util.Random;

import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.fault.AbstractFamilyNetworkFaultTests;
import dev.distlock.spi.LockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-write locks and semaphores on ZooKeeper under network faults
 * ({@link AbstractFamilyNetworkFaultTests}): two clients reach the server through a
 * {@link TcpProxy} (partitions shorter than a third of the session timeout, which lose
 * nothing; partitions of twice the session timeout, which expire the sessions; every
 * connection reset), a third directly; and the server stopped and restarted with its
 * data, as for the mutex's fault suite. Sessions time out after the lease.
 */
@Tag("server")
class ZookeeperFamilyFaultTests extends AbstractFamilyNetworkFaultTests {

	private TestingServer server;

	private TcpProxy proxy;

	private int injected;

	private int restarts;

	@Override
	protected void startStore() {
		this.server = TestZookeeper.server(ZookeeperStoreFixture.TICK_MILLIS);
		this.proxy = TcpProxy.start(this.server.getPort());
	}

	@Override
	protected LockProvider provider(boolean proxied) {
		CuratorFramework client = closeAfter(TestZookeeper
			.client(proxied ? this.proxy.connectString() : this.server.getConnectString(), (int) LEASE.toMillis()));
		return closeAfter(new ZookeeperLockProvider(client));
	}

	/**
	 * The faults in turn, a server restart first, so that even the default build's short
	 * run has each.
	 */
	@Override
	protected void injectFault(Random random) {
		switch (this.injected++ % 4) {
			case 0 -> {
				// As the mutex's SERVER_RESTART: stopped and started again with its data;
				// every client, proxied or not, loses its connection meanwhile.
				try {
					this.server.stop();
					lastOut(LEASE.dividedBy(4));
					this.server.restart();
				}
				catch (Exception ex) {
					throw new IllegalStateException("Could not restart the ZooKeeper test server", ex);
				}
				this.restarts++;
			}
			case 1 -> {
				this.proxy.blackhole();
				lastOut(LEASE.dividedBy(4));
			}
			case 2 -> {
				this.proxy.blackhole();
				lastOut(LEASE.multipliedBy(2));
			}
			default -> this.proxy.disconnectAll();
		}
	}

	@Override
	protected void heal() {
		this.proxy.heal();
	}

	@Override
	protected void stopStore() throws Exception {
		this.proxy.close();
		this.server.close();
		assertThat(this.restarts).as("server restarts").isPositive();
	}

	@Override
	protected long seed() {
		return 21;
	}

}
