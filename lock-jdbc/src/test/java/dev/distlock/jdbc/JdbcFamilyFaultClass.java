package dev.distlock.jdbc;

import dev.distlock.harness.fault.FaultSchedule;

/**
 * The fault classes of the lock family's cross-JVM suite on PostgreSQL and MariaDB
 * ({@link JdbcFamilyFaultSuiteTests}): replies lost after the server ran the statement,
 * the worker JVM killed with {@code kill -9}, and the worker JVM stopped past its lease.
 * The mutex's classes of the same faults ({@link JdbcFaultClass}) inject them; the
 * family's workload and checks are the Redis family suite's.
 */
enum JdbcFamilyFaultClass {

	/**
	 * {@link JdbcFaultClass#REPLIES_LOST}: the next reply dropped after the server ran
	 * its statement (an acquire, renewal or release of any member, a latch count-down),
	 * and its connection reset. Inside the model: no key left held by nobody, no permit
	 * leaked, no count-down counted twice.
	 */
	REPLIES_LOST(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			JdbcFaultClass.REPLIES_LOST.inject(run);
		}
	},

	/**
	 * The worker JVM killed with {@code kill -9} once, holding or waiting: its holds,
	 * permits and count-downs end with it, its leases run out on the database's clock,
	 * and this JVM goes on alone. Inside the model: a dead holder writes nothing.
	 */
	HOLDER_KILL(true) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			if (run.pause(2000, 3000)) {
				// late enough for latch rounds of both JVMs to have opened
				run.log().injected("kill -9 worker JVM");
				run.signalWorker("KILL");
				run.log().healed("worker JVM gone");
			}
			run.sleepUntilEnd();
		}
	},

	/**
	 * {@link JdbcFaultClass#HOLDER_STOP_LONG}: the worker JVM stopped for two leases,
	 * holding or waiting; its leases run out while it cannot know.
	 */
	HOLDER_STOP_LONG(false) {
		@Override
		void inject(FaultSchedule<JdbcFaultTarget> run) {
			JdbcFaultClass.HOLDER_STOP_LONG.inject(run);
		}
	};

	private final boolean inModel;

	JdbcFamilyFaultClass(boolean inModel) {
		this.inModel = inModel;
	}

	/** Whether the fault lies inside the supported fault model. */
	boolean inModel() {
		return this.inModel;
	}

	/** Injects the faults until the run ends, healing each. */
	abstract void inject(FaultSchedule<JdbcFaultTarget> run);

}
