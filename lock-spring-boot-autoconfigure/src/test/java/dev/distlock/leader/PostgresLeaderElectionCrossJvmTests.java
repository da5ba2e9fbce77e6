package dev.distlock.leader;

import java.util.Map;

import dev.distlock.harness.jdbc.PostgresServer;

/** {@link AbstractLeaderElectionCrossJvmTests} on PostgreSQL, fenced by JdbcFence. */
class PostgresLeaderElectionCrossJvmTests extends AbstractLeaderElectionCrossJvmTests {

	private PostgresServer server;

	@Override
	protected AutoCloseable startServer() {
		this.server = PostgresServer.start();
		return this.server;
	}

	@Override
	protected Map<String, String> workerSettings() {
		return Map.of(LeaderWorker.STORE, "postgres", "jdbc.url", this.server.jdbcUrl(), "jdbc.user",
				this.server.username(), "jdbc.password", this.server.password());
	}

	@Override
	protected String storeName() {
		return "PostgreSQL";
	}

}
