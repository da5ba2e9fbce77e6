package dev.distlock.leader;

import java.io.IOException;
import java.util.Map;

import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.jdbc.DatabaseServer;

/**
 * {@link AbstractLeaderFaultCrossJvmTests} on a database server, fenced by JdbcFence,
 * each candidate through a {@link TcpProxy}.
 */
abstract class AbstractDatabaseLeaderFaultCrossJvmTests extends AbstractLeaderFaultCrossJvmTests {

	private DatabaseServer server;

	/** Starts the database server. */
	protected abstract DatabaseServer startDatabase();

	@Override
	protected AutoCloseable startServer() {
		this.server = startDatabase();
		return this.server;
	}

	@Override
	protected Link link() {
		TcpProxy proxy = TcpProxy.start(this.server.port());
		String url = this.server.jdbcUrl().replace(":" + this.server.port() + "/", ":" + proxy.port() + "/");
		return new Link() {

			@Override
			public Map<String, String> settings() {
				return Map.of(LeaderWorker.STORE, AbstractDatabaseLeaderFaultCrossJvmTests.this.server.kind(),
						"jdbc.url", url, "jdbc.user", AbstractDatabaseLeaderFaultCrossJvmTests.this.server.username(),
						"jdbc.password", AbstractDatabaseLeaderFaultCrossJvmTests.this.server.password());
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
		this.server.kill();
	}

	@Override
	protected void restartServer() {
		this.server.restart();
	}

	@Override
	protected String storeName() {
		return this.server.kind();
	}

}
