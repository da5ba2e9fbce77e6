package dev.distlock.zookeeper;

import java.io.IOException;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper server and two providers on clients of their own, standing for two
 * JVMs: what the published contract suites run on.
 */
final class ZookeeperPair implements AutoCloseable {

	private final TestingServer server = TestZookeeper.server();

	private final CuratorFramework client = TestZookeeper.client(this.server.getConnectString());

	private final CuratorFramework otherClient = TestZookeeper.client(this.server.getConnectString());

	final ZookeeperLockProvider provider = new ZookeeperLockProvider(this.client);

	final ZookeeperLockProvider other = new ZookeeperLockProvider(this.otherClient);

	@Override
	public void close() throws IOException {
		this.provider.close();
		this.other.close();
		this.client.close();
		this.otherClient.close();
		this.server.close();
	}

}
