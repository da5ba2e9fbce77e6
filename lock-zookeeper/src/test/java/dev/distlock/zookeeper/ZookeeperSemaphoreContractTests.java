package dev.distlock.zookeeper;

import java.io.IOException;

import dev.distlock.spi.PermitLocking;
import dev.distlock.testsupport.AbstractSemaphoreContractTests;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The published semaphore contract on a real ZooKeeper server, with two clients standing
 * for two JVMs.
 */
class ZookeeperSemaphoreContractTests extends AbstractSemaphoreContractTests {

	private static TestingServer server;

	private static CuratorFramework client;

	private static CuratorFramework otherClient;

	private static ZookeeperLockProvider provider;

	private static ZookeeperLockProvider other;

	@BeforeAll
	static void start() {
		server = TestZookeeper.server();
		client = TestZookeeper.client(server.getConnectString());
		otherClient = TestZookeeper.client(server.getConnectString());
		provider = new ZookeeperLockProvider(client);
		other = new ZookeeperLockProvider(otherClient);
	}

	@AfterAll
	static void stop() throws IOException {
		provider.close();
		other.close();
		client.close();
		otherClient.close();
		server.close();
	}

	@Override
	protected PermitLocking provider() {
		return provider;
	}

	@Override
	protected PermitLocking otherProvider() {
		return other;
	}

}
