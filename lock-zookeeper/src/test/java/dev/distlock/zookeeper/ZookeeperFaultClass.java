package dev.distlock.zookeeper;

import dev.distlock.testsupport.fault.FaultSchedule;
import dev.distlock.testsupport.fault.FaultScenario;

/**
 * The ZooKeeper fault classes of the fault suite ({@link ZookeeperFaultSuiteTests}). The
 * sessions of the workers time out after the run's lease
 * ({@link ZookeeperProviderFactory}).
 */
enum ZookeeperFaultClass implements FaultScenario<ZookeeperFaultTarget> {

	/** No fault: the baseline. */
	NONE(true) {
		@Override
		public boolean storeFails() {
			return false;
		}

		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			run.sleepUntilEnd();
		}
	},

	/**
	 * The server stopped for less than half a lease, then started again on its port with
	 * its data: the sessions survive it (a restarted server gives each a fresh timeout).
	 */
	SERVER_RESTART(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(1000, 2500)) {
				run.stall("server stopped", run.log().millisBetween(100, run.leaseMillis() / 2),
						run.target()::stopServer, run.target()::restartServer);
			}
		}
	},

	/**
	 * A partition between the clients and the server for twice the session timeout: the
	 * server expires every session, so every holder loses its locks and must be told, and
	 * its late fenced writes rejected.
	 */
	PARTITION_PAST_SESSION(false) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(1000, 2500)) {
				run.stall("partition", 2 * run.leaseMillis(), run.target().clients::blackhole,
						run.target().clients::heal);
			}
		}
	},

	/**
	 * The worker JVM stopped with SIGSTOP for twice the session timeout, holding or
	 * waiting: its session expires on the server while it cannot know.
	 */
	HOLDER_SESSION_EXPIRED(false) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(1000, 2500)) {
				run.stall("SIGSTOP worker JVM", 2 * run.leaseMillis(), () -> run.signalWorker("STOP"),
						() -> run.signalWorker("CONT"));
			}
		}
	};

	private final boolean inModel;

	ZookeeperFaultClass(boolean inModel) {
		this.inModel = inModel;
	}

	@Override
	public boolean inModel() {
		return this.inModel;
	}

	@Override
	public ZookeeperFaultTarget start() {
		return new ZookeeperFaultTarget();
	}

}
