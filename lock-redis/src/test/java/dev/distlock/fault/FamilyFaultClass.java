package dev.distlock.fault;

import java.time.Duration;

import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;

/**
 * The fault classes of the lock family's cross-JVM suite on Redis: the mutex's
 * {@link FaultClass}es, with their layouts, faults and place in the fault model, and one
 * of the family's own, the worker JVM killed with {@code kill -9}, and two smoke classes
 * for the default build that inject several of the mutex's faults in one short run. The
 * mutex's fair variants are left out (the family's members are not fair: a fair lock is a
 * plain lock, which the mutex's suite covers).
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

	/**
	 * The default build's smoke inside the fault model: every 0.3 to 0.8 s the next of
	 * the mutex's in-model faults, in turn: Redis stopped (SIGSTOP) under half a lease, a
	 * partition under half a lease, every connection reset, replies delayed up to a sixth
	 * of a lease, {@code CLIENT KILL}. The same actions as {@link FaultClass}'s, closer
	 * together, so that one short run meets all of them.
	 */
	SMOKE_IN_MODEL(null),

	/**
	 * The default build's smoke outside the fault model: in turn, every 0.3 to 0.8 s, the
	 * worker JVM stopped (SIGSTOP) for two leases, and Redis killed ({@code kill -9}) and
	 * restarted empty.
	 */
	SMOKE_OUTSIDE(null),

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
		return (this.mutex != null) ? this.mutex.inModel() : this != SMOKE_OUTSIDE;
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
		if (this == SMOKE_IN_MODEL) {
			inModelMix(run);
		}
		else if (this == SMOKE_OUTSIDE) {
			for (int i = 0; run.pause(300, 800); i++) {
				if (i % 2 == 1) {
					run.stall("SIGSTOP worker JVM", 2 * run.leaseMillis(), () -> run.signalWorker("STOP"),
							() -> run.signalWorker("CONT"));
				}
				else {
					run.log().injected("kill -9 redis");
					run.target().restartMaster();
					run.log().healed("redis restarted");
				}
			}
		}
		else if (run.pause(2000, 3000)) {
			// late enough for latch rounds of both JVMs to have opened
			run.log().injected("kill -9 worker JVM");
			run.signalWorker("KILL");
			run.log().healed("worker JVM gone");
		}
		run.sleepUntilEnd();
	}

	private static void inModelMix(FaultSchedule<FaultLayout> run) {
		long halfLease = run.leaseMillis() / 2 - 100;
		for (int i = 0; run.pause(300, 800); i++) {
			switch (i % 5) {
				case 0 -> run.stall("SIGSTOP redis", run.log().millisBetween(100, halfLease),
						run.target().master()::pause, run.target().master()::resume);
				case 1 -> run.stall("partition", run.log().millisBetween(50, halfLease),
						run.target().clients::blackhole, run.target().clients::heal);
				case 2 -> {
					run.log().injected("connections reset");
					run.target().clients.disconnectAll();
					run.log().healed("connections reset");
				}
				case 3 -> {
					long delay = run.log().millisBetween(1, run.leaseMillis() / 6);
					run.stall("replies delayed " + delay + "ms", run.log().millisBetween(300, 800),
							() -> run.target().clients.delayReplies(Duration.ofMillis(delay)),
							run.target().clients::heal);
				}
				default -> {
					String type = run.log().random().nextBoolean() ? "normal" : "pubsub";
					run.log().injected("CLIENT KILL TYPE " + type);
					run.target().master().command("CLIENT", "KILL", "TYPE", type);
					run.log().healed("connections killed");
				}
			}
		}
	}

}
