package dev.distlock.leader;

import java.util.Map;

import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.redis.RedisServer;

/**
 * {@link AbstractLeaderFaultCrossJvmTests} on a redis-server that writes every command to
 * its append-only file before it answers (so a restart keeps the role's key and the
 * fenced value), each candidate through a {@link FaultProxy}.
 */
class RedisLeaderFaultCrossJvmTests extends AbstractLeaderFaultCrossJvmTests {

	private RedisServer server;

	@Override
	protected AutoCloseable startServer() {
		this.server = RedisServer.start("--appendonly", "yes", "--appendfsync", "always");
		return () -> this.server.close();
	}

	@Override
	protected Link link() {
		FaultProxy proxy = FaultProxy.start(this.server.host(), this.server.port());
		return new Link() {

			@Override
			public Map<String, String> settings() {
				return Map.of(LeaderWorker.STORE, "redis", "redis.port", Integer.toString(proxy.port()));
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
			public void close() {
				proxy.close();
			}

		};
	}

	@Override
	protected void killServer() {
		this.server.kill();
	}

	@Override
	protected void restartServer() {
		this.server = this.server.restart();
	}

	@Override
	protected String storeName() {
		return "Redis";
	}

}
