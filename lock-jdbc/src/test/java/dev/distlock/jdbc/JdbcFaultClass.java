package dev.distlock.jdbc;

import java.time.Duration;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.fault.FaultSchedule;

/**
 * The fault classes of the JDBC store's fault suite, on PostgreSQL and on MariaDB: the
 * server killed and restarted, its connections cut, replies lost, latency and a partition
 * between the clients and the server, the worker JVM (a holder) frozen shorter and longer
 * than the lease, the server frozen shorter and longer than the lease. Inside the fault
 * model no two holders may overlap; outside it ({@link #HOLDER_STOP_LONG},
 * {@link #SERVER_STOP_LONG}), every overlap must be caught by fencing and signalled as a
 * lease loss. The gaps between faults are short, so that even the default 8 s run injects
 * several. Latency, partitions and lost replies go through a byte-level
 * {@link dev.distlock.harness.TcpProxy}. {@link JdbcFaultScenario} runs a class on one
 * database.
 */
enum JdbcFaultClass {

	/** No fault: the baseline (run when named, and with {@code -Psoak}). */
	NONE(true) {
		@Override
		boolean storeFails() {
			return false;
		}

		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			run.sleepUntilEnd();
		}
	},

	/**
	 * {@code kill -9} of the server, then a restart on the same data directory: committed
	 * rows (and so every fence) survive crash recovery (PostgreSQL's WAL; InnoDB's redo
	 * log, written to the operating system at every commit).
	 */
	SERVER_KILL(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.log().injected("kill -9 of the server");
				run.target().database().kill();
				run.target().database().restart();
				run.log().healed("server restarted");
			}
		}
	},

	/**
	 * Every client connection closed from the server side (PostgreSQL's
	 * {@code pg_terminate_backend}, MariaDB's {@code KILL CONNECTION}).
	 */
	CONNECTIONS_TERMINATED(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(200, 600)) {
				int closed = run.target().database().terminateConnections();
				run.log().injected("server-side kill of " + closed + " connections");
			}
		}
	},

	/**
	 * The reply to one statement lost after the server ran it (an acquire, a renewal, a
	 * release or an owner check, whichever comes next), and its connection reset right
	 * there: the call runs the statement again on another connection, or gives up and
	 * undoes an acquisition it may have made.
	 */
	REPLIES_LOST(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(200, 800)) {
				long before = run.target().proxy().droppedReplies();
				run.log().injected("next reply dropped");
				run.target().proxy().dropNextReplyAndReset();
				Conditions.await("a reply was dropped", Duration.ofSeconds(30),
						() -> run.target().proxy().droppedReplies() > before || run.ended());
				run.log().healed("reply lost, its connection reset");
			}
		}
	},

	/**
	 * Latency between the clients and the server, up to a third of the lease, for a
	 * while.
	 */
	LATENCY(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				long delay = run.log().millisBetween(20, run.leaseMillis() / 3);
				run.stall("latency " + delay + "ms", run.log().millisBetween(500, 1500),
						() -> run.target().proxy().delay(delay), run.target().proxy()::heal);
			}
		}
	},

	/**
	 * The clients cut off from the server (nothing passes) for less than half a lease.
	 */
	PARTITION(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("partition", run.log().millisBetween(50, run.leaseMillis() / 2 - 100),
						run.target().proxy()::blackhole, run.target().proxy()::heal);
			}
		}
	},

	/**
	 * The worker JVM stopped with SIGSTOP for less than half a lease, holding or waiting:
	 * its renewals resume in time.
	 */
	HOLDER_STOP_SHORT(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("SIGSTOP worker JVM", run.log().millisBetween(100, run.leaseMillis() / 2 - 100),
						() -> run.signalWorker("STOP"), () -> run.signalWorker("CONT"));
			}
		}
	},

	/**
	 * The worker JVM stopped with SIGSTOP for twice the lease, holding or waiting: its
	 * leases run out while it cannot know.
	 */
	HOLDER_STOP_LONG(false) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("SIGSTOP worker JVM", 2 * run.leaseMillis(), () -> run.signalWorker("STOP"),
						() -> run.signalWorker("CONT"));
			}
		}
	},

	/** The server stopped with SIGSTOP for less than half a lease. */
	SERVER_STOP_SHORT(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 1000)) {
				run.stall("SIGSTOP of the server", run.log().millisBetween(100, run.leaseMillis() / 2 - 100),
						run.target().database()::pause, run.target().database()::resume);
			}
		}
	},

	/**
	 * The server stopped with SIGSTOP for twice the lease: every lease runs out
	 * meanwhile.
	 */
	SERVER_STOP_LONG(false) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			while (run.pause(300, 800)) {
				run.stall("SIGSTOP of the server", 2 * run.leaseMillis(), run.target().database()::pause,
						run.target().database()::resume);
			}
		}
	};

	private final boolean inModel;

	JdbcFaultClass(boolean inModel) {
		this.inModel = inModel;
	}

	/** Whether the fault lies inside the supported fault model. */
	boolean inModel() {
		return this.inModel;
	}

	/** Whether the fault makes the database fail or time out. */
	boolean storeFails() {
		return true;
	}

	/** Injects the faults until the run ends, healing each. */
	abstract void inject(FaultSchedule<JdbcFaultTarget> run);

}
