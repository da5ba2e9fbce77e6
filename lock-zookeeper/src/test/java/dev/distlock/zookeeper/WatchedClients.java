package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.LockOptions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A ZooKeeper test server (500 ms tick) and the clients, providers and templates a test
 * makes on it, closed with it after each test: register it as an instance field with
 * {@code @RegisterExtension}. The templates wait up to 45 s and poll only once a minute,
 * so that a waiter that was not woken by a watch misses the tests' bounds (20 or 30 s):
 * neither its poll nor its last attempt at the end of its wait comes within them.
 */
final class WatchedClients implements AfterEachCallback {

	final TestingServer server = TestZookeeper.server(500);

	private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

	<T extends AutoCloseable> T closing(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	/** A client with Curator's default settings. */
	CuratorFramework client() {
		return closing(TestZookeeper.client(this.server.getConnectString()));
	}

	ZookeeperLockProvider provider(CuratorFramework client) {
		return closing(new ZookeeperLockProvider(client));
	}

	/** A template whose locks have the given lease, renewed. */
	DefaultLockTemplate template(ZookeeperLockProvider provider, Duration lease) {
		RenewalScheduler scheduler = closing(new RenewalScheduler());
		return closing(new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(45))
					.leaseTime(lease)
					.autoRenew(true)
					.retryInterval(Duration.ofMinutes(1))
					.build()));
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.server.close();
	}

}
