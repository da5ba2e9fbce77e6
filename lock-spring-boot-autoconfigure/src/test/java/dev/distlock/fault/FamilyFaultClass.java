package dev.distlock.fault;

import dev.distlock.testsupport.fault.FaultScenario;
import dev.distlock.testsupport.fault.FaultSchedule;

/**
 * The fault classes of the lock family's cross-JVM suite on Redis: the mutex's
 * {@link FaultClass}es, with their layouts, faults and place in the fault model, and one
 * of the family's own, the worker JVM killed with {@code kill -9}. The mutex's fair
 * variants are left out (the family's members are not fair: a fair lock is a plain lock,
 * which the mutex's suite covers).
 */
enum FamilyFaultClass implements FaultScenario<FaultLayout> {

	/** No fault: the baseline. */
	NONE(FaultClass.NONE),

	/**
	 * The worker JVM killed with {@code kill -9} once, holding or waiting: its holds,
	 * permits and count-downs end with it, its leases run out on Redis's clock, and this
	 * JVM goes on alone. Inside the model: a dead holder writes nothing.
	 */
	HOLDER_KILL(null),

	/** {@link FaultClass#HOLDER_STOP}: the worker JVM stopped for two leases. */
	HOLDER_STOP(FaultClass.HOLDER_STOP),

	/** {@link FaultClass#REDIS_KILL_AOF}. */
	REDIS_KILL_AOF(FaultClass.REDIS_KILL_AOF),

	/** {@link FaultClass#REDIS_KILL_NO_PERSISTENCE}: Redis restarted empty. */
	REDIS_KILL_NO_PERSISTENCE(FaultClass.REDIS_KILL_NO_PERSISTENCE),

	/** {@link FaultClass#REDIS_STOP_SHORT}: Redis paused under half a lease. */
	REDIS_STOP_SHORT(FaultClass.REDIS_STOP_SHORT),

	/** {@link FaultClass#REDIS_STOP_LONG}: Redis paused for two leases. */
	REDIS_STOP_LONG(FaultClass.REDIS_STOP_LONG),

	/**
	 * {@link FaultClass#STORE_HUNG}: Redis paused past the store timeout, client
	 * defaults.
	 */
	STORE_HUNG(FaultClass.STORE_HUNG),

	/** {@link FaultClass#CLIENT_PAUSE_WRITE}. */
	CLIENT_PAUSE_WRITE(FaultClass.CLIENT_PAUSE_WRITE),

	/** {@link FaultClass#CLIENT_KILL}. */
	CLIENT_KILL(FaultClass.CLIENT_KILL),

	/** {@link FaultClass#PROXY_LATENCY}. */
	PROXY_LATENCY(FaultClass.PROXY_LATENCY),

	/** {@link FaultClass#PROXY_PARTITION}. */
	PROXY_PARTITION(FaultClass.PROXY_PARTITION),

	/** {@link FaultClass#PROXY_RESET}. */
	PROXY_RESET(FaultClass.PROXY_RESET),

	/** {@link FaultClass#PROXY_LOST_REPLY}. */
	PROXY_LOST_REPLY(FaultClass.PROXY_LOST_REPLY),

	/** {@link FaultClass#FAILOVER_LOST_WRITES}. */
	FAILOVER_LOST_WRITES(FaultClass.FAILOVER_LOST_WRITES),

	/** {@link FaultClass#EVICTION}. */
	EVICTION(FaultClass.EVICTION),

	/** {@link FaultClass#INTERRUPTS}: the test JVM's workers interrupted. */
	INTERRUPTS(FaultClass.INTERRUPTS);

	/** The mutex's class whose faults this one injects; null for the family's own. */
	private final FaultClass mutex;

	FamilyFaultClass(FaultClass mutex) {
		this.mutex = mutex;
	}

	@Override
	public boolean inModel() {
		return (this.mutex == null) || this.mutex.inModel();
	}

	@Override
	public boolean storeFails() {
		return (this.mutex == null) || this.mutex.storeFails();
	}

	@Override
	public boolean clientDefaults() {
		return (this.mutex != null) && this.mutex.clientDefaults();
	}

	@Override
	public FaultLayout start() {
		return (this.mutex != null) ? this.mutex.start() : FaultLayout.single();
	}

	@Override
	public void inject(FaultSchedule<FaultLayout> run) {
		if (this.mutex != null) {
			this.mutex.inject(run);
			return;
		}
		if (run.pause(1000, 2500)) {
			run.log().injected("kill -9 worker JVM");
			run.signalWorker("KILL");
			run.log().healed("worker JVM gone");
		}
		run.sleepUntilEnd();
	}

}
