package dev.distlock.jdbc;

import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;

/**
 * One {@link JdbcFaultClass} on one database: a server of its own of that kind per run.
 *
 * @param fault the fault class
 * @param database {@code postgresql} or {@code mariadb}
 */
record JdbcFaultScenario(JdbcFaultClass fault, String database) implements FaultScenario<JdbcFaultTarget> {

	@Override
	public String name() {
		return this.fault.name();
	}

	@Override
	public boolean inModel() {
		return this.fault.inModel();
	}

	@Override
	public boolean storeFails() {
		return this.fault.storeFails();
	}

	@Override
	public JdbcFaultTarget start() {
		return new JdbcFaultTarget(this.database.equals("mariadb") ? MariaDbServer.start() : PostgresServer.start());
	}

	@Override
	public void inject(FaultSchedule<JdbcFaultTarget> run) {
		this.fault.inject(run);
	}

	@Override
	public String toString() {
		return this.database + " " + this.fault;
	}

}
