package dev.distlock.zookeeper;

import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;

/**
 * The ZooKeeper fault classes of the fault suite ({@link ZookeeperFaultSuiteTests}). The
 * sessions of the workers time out after the run's lease
 * ({@link ZookeeperProviderFactory}), and the server ticks every 100 ms. Inside the fault
 * model, no two holders may overlap; outside it (a session that expires while its holder
 * cannot know), every overlap must be caught by fencing and signalled as a lease loss.
 * Clock steps are no class here: a session's timeout is measured by the server's and the
 * client's monotonic clocks, and a lock has no expiry time written in the store that a
 * wall-clock step could move.
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
	 * {@code kill -9} of the server's JVM, then a restart on its port and data: what the
	 * server acknowledged survives (it logs each transaction before it answers). A
	 * restart slower than a session ends the clients' sessions, and with them their
	 * locks, which must be reported; a lock is granted again only once the old node is
	 * gone.
	 */
	SERVER_KILL(true) {
		@Override
		public ZookeeperFaultTarget start() {
			return ZookeeperFaultTarget.inOwnJvm();
		}

		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.log().injected("kill -9 zookeeper");
				run.target().killServer();
				run.target().restartServer();
				run.log().healed("zookeeper restarted");
			}
		}
	},

	/** Every client connection reset: the clients reconnect, their sessions live on. */
	CONNECTIONS_RESET(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(200, 1500)) {
				run.log().injected("connections reset");
				run.target().clients.disconnectAll();
				run.log().healed("connections reset");
			}
		}
	},

	/**
	 * The server's replies held for a moment while requests still reach it, then every
	 * connection reset: the server applied creates, deletes and reads whose replies are
	 * lost, and the clients retry them on a new connection of the same session.
	 */
	REPLIES_LOST(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(200, 1200)) {
				run.log().injected("replies held, then connections reset");
				run.target().clients.holdReplies();
				run.sleep(run.log().millisBetween(20, 200));
				run.target().clients.disconnectAll();
				run.target().clients.heal();
				run.log().healed("replies lost");
			}
		}
	},

	/**
	 * Latency between the clients and the server for a while: every chunk of bytes held
	 * up to an eighth of the session timeout either way, so that a round trip stays under
	 * a third of it and the clients' heartbeats keep their connections up.
	 */
	LATENCY(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(300, 1000)) {
				long delay = run.log().millisBetween(10, run.leaseMillis() / 8);
				run.stall("latency " + delay + "ms", run.log().millisBetween(500, 1500),
						() -> run.target().clients.delay(delay), run.target().clients::heal);
			}
		}
	},

	/**
	 * The worker JVM stopped with SIGSTOP, holding or waiting, for up to a third of the
	 * session timeout: its session outlives the pause, whenever the server last heard
	 * from it (a client that has sent nothing pings after a third of the session
	 * timeout).
	 */
	HOLDER_PAUSE_SHORT(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(500, 1500)) {
				run.stall("SIGSTOP worker JVM", run.log().millisBetween(100, run.leaseMillis() / 3),
						() -> run.signalWorker("STOP"), () -> run.signalWorker("CONT"));
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
			while (run.pause(300, 1000)) {
				run.stall("SIGSTOP worker JVM", 2 * run.leaseMillis(), () -> run.signalWorker("STOP"),
						() -> run.signalWorker("CONT"));
			}
		}
	},

	/**
	 * A partition between the clients and the server for less than half the session
	 * timeout: the sessions live on, and a client whose connection was found silent in
	 * the meantime reconnects to its session.
	 */
	PARTITION_SHORT(true) {
		@Override
		public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("partition", run.log().millisBetween(50, run.leaseMillis() / 2 - 100),
						run.target().clients::blackhole, run.target().clients::heal);
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
			while (run.pause(300, 1000)) {
				run.stall("partition", 2 * run.leaseMillis(), run.target().clients::blackhole,
						run.target().clients::heal);
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
		return ZookeeperFaultTarget.inProcess();
	}

}
