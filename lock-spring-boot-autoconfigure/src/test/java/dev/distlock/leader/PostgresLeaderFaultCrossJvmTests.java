package dev.distlock.leader;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * {@link AbstractLeaderFaultCrossJvmTests} on PostgreSQL. Each fault waits out a lease,
 * as on Redis, which the default build runs; this one runs with {@code -Psoak}.
 */
@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
class PostgresLeaderFaultCrossJvmTests extends AbstractDatabaseLeaderFaultCrossJvmTests {

	@Override
	protected DatabaseServer startDatabase() {
		return PostgresServer.start();
	}

}
