package dev.distlock.leader;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.redis.RedisServer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * {@link AbstractLeaderFaultCrossJvmTests} with the locks in ZooKeeper, each candidate
 * through a {@link TcpProxy}, and the fenced value in Redis, reached directly: the cut
 * parts a candidate from ZooKeeper only. The role lives as long as the leader's session
 * (60 s by default), so each fault waits out a session or more, and this runs with
 * {@code -Psoak}.
 */
@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
class ZookeeperLeaderFaultCrossJvmTests extends AbstractLeaderFaultCrossJvmTests {

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
	protected Link link() {
		TcpProxy proxy = TcpProxy.start(this.zookeeper.getPort());
		return new Link() {

			@Override
			public Map<String, String> settings() {
				return Map.of(LeaderWorker.STORE, "zookeeper", "zookeeper.connect", proxy.connectString(), "redis.port",
						Integer.toString(ZookeeperLeaderFaultCrossJvmTests.this.redis.port()));
			}

			@Override
			public void cut() {
				proxy.blackhole();
			}

			@Override
			public void heal() {
				proxy.heal();
			}

			@Override
			public void close() throws IOException {
				proxy.close();
			}

		};
	}

	@Override
	protected void killServer() {
		try {
			this.zookeeper.stop();
		}
		catch (IOException ex) {
			throw new IllegalStateException("Could not stop the ZooKeeper test server", ex);
		}
	}

	@Override
	protected void restartServer() {
		try {
			this.zookeeper.restart();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not restart the ZooKeeper test server", ex);
		}
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
