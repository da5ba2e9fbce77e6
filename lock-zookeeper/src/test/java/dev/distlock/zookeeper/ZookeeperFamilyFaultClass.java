package dev.distlock.zookeeper;

import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;

/**
 * The fault classes of the lock family's cross-JVM suite on ZooKeeper
 * ({@link ZookeeperFamilyFaultSuiteTests}): the mutex's {@link ZookeeperFaultClass}es,
 * with their servers, faults and place in the fault model, and one of the family's own,
 * the worker JVM killed with {@code kill -9}. The workers' sessions time out after the
 * run's lease, on a server ticking every 100 ms, as in the mutex's suite.
 */
enum ZookeeperFamilyFaultClass implements FaultScenario<ZookeeperFaultTarget> {

	/** No fault: the baseline. */
	NONE(ZookeeperFaultClass.NONE),

	/**
	 * The worker JVM killed with {@code kill -9} once, holding or waiting, as late as
	 * leaves three leases before the end: its read and write holds, permits, multi-key
	 * locks and queued nodes go with its session, a lease later, and this JVM goes on
	 * alone. Inside the model: a dead holder writes nothing, and its count-downs were
	 * counted once.
	 */
	HOLDER_KILL(null),

	/**
	 * {@link ZookeeperFaultClass#HOLDER_SESSION_EXPIRED}: the worker JVM stopped for
	 * twice the session timeout, holding or waiting; its session expires while it cannot
	 * know. Whoever got in meanwhile overlaps it, so it must be told, and its late fenced
	 * writes refused.
	 */
	HOLDER_SESSION_EXPIRED(ZookeeperFaultClass.HOLDER_SESSION_EXPIRED),

	/**
	 * {@link ZookeeperFaultClass#REPLIES_LOST}: creates (of lock, permit and latch
	 * nodes), deletes and reads applied by the server whose replies are lost with their
	 * connection, and retried by the clients on the same session.
	 */
	REPLIES_LOST(ZookeeperFaultClass.REPLIES_LOST),

	/**
	 * {@link ZookeeperFaultClass#SERVER_KILL}: {@code kill -9} of the server, restarted
	 * on its data.
	 */
	SERVER_KILL(ZookeeperFaultClass.SERVER_KILL),

	/** {@link ZookeeperFaultClass#CONNECTIONS_RESET}. */
	CONNECTIONS_RESET(ZookeeperFaultClass.CONNECTIONS_RESET),

	/** {@link ZookeeperFaultClass#LATENCY}. */
	LATENCY(ZookeeperFaultClass.LATENCY),

	/** {@link ZookeeperFaultClass#HOLDER_PAUSE_SHORT}: the session outlives the pause. */
	HOLDER_PAUSE_SHORT(ZookeeperFaultClass.HOLDER_PAUSE_SHORT),

	/** {@link ZookeeperFaultClass#PARTITION_SHORT}. */
	PARTITION_SHORT(ZookeeperFaultClass.PARTITION_SHORT),

	/**
	 * {@link ZookeeperFaultClass#PARTITION_PAST_SESSION}: every session expires.
	 */
	PARTITION_PAST_SESSION(ZookeeperFaultClass.PARTITION_PAST_SESSION);

	/** The mutex's class whose faults this one injects; null for the family's own. */
	private final ZookeeperFaultClass mutex;

	ZookeeperFamilyFaultClass(ZookeeperFaultClass mutex) {
		this.mutex = mutex;
	}

	@Override
	public boolean inModel() {
		return (this.mutex == null) || this.mutex.inModel();
	}

	/**
	 * A worker JVM killed makes nothing fail in this JVM: every backend error there is
	 * the library's own.
	 */
	@Override
	public boolean storeFails() {
		return (this.mutex != null) && this.mutex.storeFails();
	}

	@Override
	public ZookeeperFaultTarget start() {
		return (this.mutex != null) ? this.mutex.start() : ZookeeperFaultTarget.inProcess();
	}

	@Override
	public void inject(FaultSchedule<ZookeeperFaultTarget> run) {
		if (this.mutex != null) {
			this.mutex.inject(run);
			return;
		}
		// As late as leaves the session's expiry and the recovery room before the end,
		// so that both JVMs worked together for most of a short run: a store this slow
		// per call needs it for its permit holders and latch rounds to meet.
		long killAt = (run.endNanos() - System.nanoTime()) / 1_000_000 - 3 * run.leaseMillis() - 800;
		if (run.pause(Math.max(0, killAt), Math.max(0, killAt) + 500)) {
			run.log().injected("kill -9 worker JVM");
			run.signalWorker("KILL");
			run.log().healed("worker JVM gone");
		}
		run.sleepUntilEnd();
	}

}
