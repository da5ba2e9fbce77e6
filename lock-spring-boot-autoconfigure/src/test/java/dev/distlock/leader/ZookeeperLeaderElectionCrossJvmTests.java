package dev.distlock.leader;

import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.redis.RedisServer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * {@link AbstractLeaderElectionCrossJvmTests} with the locks in ZooKeeper (whose lease is
 * the client's session: 60 s by default, which the test server's tick allows) and the
 * fenced value in Redis. Each fault waits out a whole session, so it runs with
 * {@code -Psoak} ({@code -Ddistlock.soak=true}); by default ZooKeeper's revocation on a
 * lost session is covered in one JVM by the store module's leader tests.
 */
@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
class ZookeeperLeaderElectionCrossJvmTests extends AbstractLeaderElectionCrossJvmTests {

	private RedisServer redis;

	private TestingServer zookeeper;

	@Override
	protected AutoCloseable startServer() {
		this.redis = RedisServer.start();
		try {
			this.zookeeper = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 3000, -1), true);
		}
		catch (Exception ex) {
			this.redis.close();
			throw new IllegalStateException("Could not start a ZooKeeper test server", ex);
		}
		return () -> {
			try {
				this.zookeeper.close();
			}
			finally {
				this.redis.close();
			}
		};
	}

	@Override
	protected Map<String, String> workerSettings() {
		return Map.of(LeaderWorker.STORE, "zookeeper", "zookeeper.connect", this.zookeeper.getConnectString(),
				"redis.port", Integer.toString(this.redis.port()));
	}

	@Override
	protected String storeName() {
		return "ZooKeeper";
	}

	@Override
	protected Duration failover() {
		return Duration.ofSeconds(150);
	}

}
