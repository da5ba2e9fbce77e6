package dev.distlock.leader;

import java.util.Map;

import dev.distlock.harness.jdbc.MariaDbServer;

/** {@link AbstractLeaderElectionCrossJvmTests} on MariaDB, fenced by JdbcFence. */
class MariaDbLeaderElectionCrossJvmTests extends AbstractLeaderElectionCrossJvmTests {

	private MariaDbServer server;

	@Override
	protected AutoCloseable startServer() {
		this.server = MariaDbServer.start();
		return this.server;
	}

	@Override
	protected Map<String, String> workerSettings() {
		return Map.of(LeaderWorker.STORE, "mariadb", "jdbc.url", this.server.jdbcUrl(), "jdbc.user",
				this.server.username(), "jdbc.password", this.server.password());
	}

	@Override
	protected String storeName() {
		return "MariaDB";
	}

}
