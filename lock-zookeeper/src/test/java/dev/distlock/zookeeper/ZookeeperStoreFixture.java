package dev.distlock.zookeeper;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;
import org.apache.curator.test.TestingServer;

/**
 * A ZooKeeper test server of its own (in this JVM, on a loopback port, with a 100 ms tick
 * so that sessions may be as short as 200 ms and as long as 2 s) for the cross-JVM tests
 * of {@code lock-test-harness}; the resources the workloads write to are in a
 * redis-server beside it, outside the store under test.
 */
final class ZookeeperStoreFixture implements StoreFixture {

	static final int TICK_MILLIS = 100;

	private final TestingServer server = TestZookeeper.server(TICK_MILLIS);

	private final RedisServer resources = RedisServer.start();

	@Override
	public Class<? extends ProviderFactory> providerFactory() {
		return ZookeeperProviderFactory.class;
	}

	@Override
	public Class<? extends ResourceFactory> resourceFactory() {
		return RedisResources.class;
	}

	@Override
	public Map<String, String> settings() {
		return settings(this.resources, this.server.getConnectString());
	}

	/**
	 * The settings of both factories: the resource server's and the connect string the
	 * clients use.
	 */
	static Map<String, String> settings(RedisServer resources, String connectString) {
		Map<String, String> settings = new LinkedHashMap<>(RedisResources.settings(resources));
		settings.put(ZookeeperProviderFactory.CONNECT, connectString);
		return settings;
	}

	@Override
	public void close() {
		try {
			this.server.close();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			this.resources.close();
		}
	}

}
