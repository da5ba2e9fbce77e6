package dev.distlock.jdbc;

import dev.distlock.testsupport.fault.FaultSchedule;
import dev.distlock.testsupport.fault.FaultScenario;

/**
 * The fault classes of the JDBC store's fault suite, on PostgreSQL: the server killed and
 * restarted, its connections terminated, latency and a partition between the clients and
 * the server, the server frozen shorter and longer than the lease. Inside the fault model
 * (all but {@link #SERVER_STOP_LONG}) no two holders may overlap; outside it, every
 * overlap must be caught by fencing and signalled as a lease loss. The gaps between
 * faults are short, so that even the default 8 s run injects several. Latency and
 * partitions go through a byte-level {@link dev.distlock.testsupport.TcpProxy}.
 */
enum JdbcFaultClass implements FaultScenario<JdbcFaultTarget> {

	/** No fault: the baseline. */
	NONE(true) {
		@Override
		public boolean storeFails() {
			return false;
		}

		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			run.sleepUntilEnd();
		}
	},

	/**
	 * {@code kill -9} of PostgreSQL, then a restart on the same data directory: committed
	 * rows (and so every fence) survive crash recovery.
	 */
	SERVER_KILL(true) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.log().injected("kill -9 postgres");
				run.target().database().kill();
				run.target().database().restart();
				run.log().healed("postgres restarted");
			}
		}
	},

	/**
	 * Every client connection closed from the server side ({@code pg_terminate_backend}).
	 */
	CONNECTIONS_TERMINATED(true) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(200, 600)) {
				int closed = run.target().database().terminateConnections();
				run.log().injected("pg_terminate_backend of " + closed + " connections");
			}
		}
	},

	/**
	 * Latency between the clients and PostgreSQL, up to a third of the lease, for a
	 * while.
	 */
	LATENCY(true) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				long delay = run.log().millisBetween(20, run.leaseMillis() / 3);
				run.stall("latency " + delay + "ms", run.log().millisBetween(500, 1500),
						() -> run.target().proxy().delay(delay), run.target().proxy()::heal);
			}
		}
	},

	/**
	 * The clients cut off from PostgreSQL (nothing passes) for less than half a lease.
	 */
	PARTITION(true) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("partition", run.log().millisBetween(50, run.leaseMillis() / 2 - 100),
						run.target().proxy()::blackhole, run.target().proxy()::heal);
			}
		}
	},

	/** PostgreSQL stopped with SIGSTOP for less than half a lease. */
	SERVER_STOP_SHORT(true) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("SIGSTOP postgres", run.log().millisBetween(100, run.leaseMillis() / 2 - 100),
						run.target().database()::pause, run.target().database()::resume);
			}
		}
	},

	/**
	 * PostgreSQL stopped with SIGSTOP for twice the lease: every lease runs out
	 * meanwhile.
	 */
	SERVER_STOP_LONG(false) {
		@Override
		public void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 800)) {
				run.stall("SIGSTOP postgres", 2 * run.leaseMillis(), run.target().database()::pause,
						run.target().database()::resume);
			}
		}
	};

	private final boolean inModel;

	JdbcFaultClass(boolean inModel) {
		this.inModel = inModel;
	}

	@Override
	public boolean inModel() {
		return this.inModel;
	}

	@Override
	public JdbcFaultTarget start() {
		return JdbcFaultTarget.postgres();
	}

}
