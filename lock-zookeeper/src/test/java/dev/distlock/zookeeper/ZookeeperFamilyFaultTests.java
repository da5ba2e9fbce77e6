package dev.distlock.zookeeper;

import java.util.Random;

import dev.distlock.spi.LockProvider;
import dev.distlock.testsupport.TcpProxy;
import dev.distlock.testsupport.fault.AbstractFamilyNetworkFaultTests;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;

/**
 * Read-write locks and semaphores on ZooKeeper under network faults
 * ({@link AbstractFamilyNetworkFaultTests}): two clients reach the server through a
 * {@link TcpProxy} (partitions shorter than a third of the session timeout, which lose
 * nothing; partitions of twice the session timeout, which expire the sessions; every
 * connection reset), a third directly. Sessions time out after the lease.
 */
class ZookeeperFamilyFaultTests extends AbstractFamilyNetworkFaultTests {

	private TestingServer server;

	private TcpProxy proxy;

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

	@Override
	protected void injectFault(Random random) {
		switch (random.nextInt(3)) {
			case 0 -> {
				this.proxy.blackhole();
				lastOut(LEASE.dividedBy(4));
			}
			case 1 -> {
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
	}

	@Override
	protected long seed() {
		return 21;
	}

}
