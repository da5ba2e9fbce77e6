package dev.distlock.leader;

import java.util.Map;

import dev.distlock.harness.redis.RedisServer;

/**
 * {@link AbstractLeaderElectionCrossJvmTests} on a redis-server, fenced by
 * RedisFencedValues.
 */
class RedisLeaderElectionCrossJvmTests extends AbstractLeaderElectionCrossJvmTests {

	private RedisServer server;

	@Override
	protected AutoCloseable startServer() {
		this.server = RedisServer.start();
		return this.server;
	}

	@Override
	protected Map<String, String> workerSettings() {
		return Map.of(LeaderWorker.STORE, "redis", "redis.port", Integer.toString(this.server.port()));
	}

	@Override
	protected String storeName() {
		return "Redis";
	}

}
