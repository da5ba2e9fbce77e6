package dev.distlock.fault;

import java.time.Duration;
import java.util.List;
import java.util.Random;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;
import dev.distlock.redis.RedisLockProvider;

import org.springframework.data.redis.core.RedisCallback;

/**
 * The faults a run injects, one class at a time, each with the layout it needs and
 * whether it lies inside the supported fault model: pauses and stalls shorter than the
 * lease, latency under a third of it, interrupts, connection kills, a Redis
 * {@code kill -9} with {@code appendfsync always}. Inside it, no two holders may overlap;
 * outside it, every overlap must be caught by fencing and signalled as a lease loss.
 */
enum FaultClass implements FaultScenario<FaultLayout> {

	/** No fault: the baseline. */
	NONE(true) {
		@Override
		public boolean storeFails() {
			return false;
		}

		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			run.sleepUntilEnd();
		}
	},

	/** {@code kill -9} of Redis with {@code appendfsync always}, then a restart. */
	REDIS_KILL_AOF(true, "--appendonly", "yes", "--appendfsync", "always") {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			killAndRestart(run);
		}
	},

	/** {@code kill -9} of Redis without persistence: every lock is forgotten. */
	REDIS_KILL_NO_PERSISTENCE(false) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			killAndRestart(run);
		}
	},

	/** Redis stopped with SIGSTOP for less than half a lease. */
	REDIS_STOP_SHORT(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(1000, 2500)) {
				run.stall("SIGSTOP redis", run.log().millisBetween(100, run.leaseMillis() / 2 - 100),
						run.target().master()::pause, run.target().master()::resume);
			}
		}
	},

	/** Redis stopped with SIGSTOP for twice the lease: every lease runs out meanwhile. */
	REDIS_STOP_LONG(false) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(1500, 3000)) {
				run.stall("SIGSTOP redis", 2 * run.leaseMillis(), run.target().master()::pause,
						run.target().master()::resume);
			}
		}
	},

	/**
	 * Redis stopped with SIGSTOP for 4 to 8 s, longer than the store timeout and many
	 * leases, with the client's default settings (a 60 s command timeout) and the default
	 * store timeout: every call is cut off by the store timeout, not by the client. Every
	 * acquire must end within its wait time plus a store timeout, every release within a
	 * store timeout, and a call made entirely while Redis is stopped must end as a
	 * backend error, never as a busy lock.
	 */
	STORE_HUNG(false) {
		@Override
		public boolean clientDefaults() {
			return true;
		}

		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			long storeTimeout = RedisLockProvider.DEFAULT_STORE_TIMEOUT.toMillis();
			while (run.pause(1500, 2500)) {
				// Two store timeouts or more, so that a call waiting out the whole stop
				// shows past its bound and slack; cut short near the end, for the workers
				// to see Redis answer again.
				long left = (run.endNanos() - System.nanoTime()) / 1_000_000 - run.leaseMillis();
				long hang = Math.min(run.log().millisBetween(2 * storeTimeout, 8000), left);
				if (hang < storeTimeout + 1000) {
					return;
				}
				run.stall("SIGSTOP redis, calls hung", hang, () -> {
					run.target().master().pause();
					run.hangStarted();
				}, () -> {
					run.hangEnded();
					run.target().master().resume();
				});
			}
		}
	},

	/** The worker JVM stopped with SIGSTOP for twice the lease, holding or waiting. */
	HOLDER_STOP(false) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(1000, 2500)) {
				run.stall("SIGSTOP worker JVM", 2 * run.leaseMillis(), () -> run.signalWorker("STOP"),
						() -> run.signalWorker("CONT"));
			}
		}
	},

	/** {@code CLIENT PAUSE ... WRITE} for less than half a lease. */
	CLIENT_PAUSE_WRITE(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(500, 2000)) {
				long stall = run.log().millisBetween(100, run.leaseMillis() / 2 - 100);
				run.stall("CLIENT PAUSE WRITE", stall,
						() -> run.target().master().command("CLIENT", "PAUSE", Long.toString(stall), "WRITE"), () -> {
						});
			}
		}
	},

	/** {@code CLIENT KILL} of every command connection or every subscriber. */
	CLIENT_KILL(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(200, 1500)) {
				String type = run.log().random().nextBoolean() ? "normal" : "pubsub";
				run.log().injected("CLIENT KILL TYPE " + type);
				run.target().master().command("CLIENT", "KILL", "TYPE", type);
				run.log().healed("connections killed");
			}
		}
	},

	/** Replies delayed by up to a sixth of the lease. */
	PROXY_LATENCY(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(300, 1500)) {
				long delay = run.log().millisBetween(1, run.leaseMillis() / 6);
				run.log().injected("replies delayed " + delay + "ms");
				run.target().clients.delayReplies(Duration.ofMillis(delay));
				run.sleep(run.log().millisBetween(500, 2000));
				run.target().clients.heal();
				run.log().healed("no delay");
			}
		}
	},

	/** A partition between clients and Redis, shorter than half a lease. */
	PROXY_PARTITION(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(500, 2000)) {
				run.stall("partition", run.log().millisBetween(50, run.leaseMillis() / 2 - 100),
						run.target().clients::blackhole, run.target().clients::heal);
			}
		}
	},

	/** Every client connection reset. */
	PROXY_RESET(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(200, 1500)) {
				run.log().injected("connections reset");
				run.target().clients.disconnectAll();
				run.log().healed("connections reset");
			}
		}
	},

	/**
	 * The reply to one command lost after Redis applied it (an acquire, a renewal or a
	 * release, whichever comes next), and its connection reset right there, as TCP would.
	 */
	PROXY_LOST_REPLY(true) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(200, 1200)) {
				long before = run.target().clients.droppedReplies();
				run.log().injected("next reply dropped");
				run.target().clients.dropNextReplyAndReset();
				Conditions.await("a reply was dropped", Duration.ofSeconds(30),
						() -> run.target().clients.droppedReplies() > before || run.ended());
				run.log().healed("reply lost, its connection reset");
			}
		}
	},

	/**
	 * Replication frozen, then the replica promoted: locks taken meanwhile are lost on
	 * the new master.
	 */
	FAILOVER_LOST_WRITES(false) {
		@Override
		public FaultLayout start() {
			return FaultLayout.replicated();
		}

		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			while (run.pause(1000, 2500)) {
				run.target().awaitReplicaInSync(Duration.ofSeconds(10));
				run.log().injected("replication frozen");
				run.target().freezeReplication();
				run.sleep(run.log().millisBetween(200, 800));
				run.log().injected("failover to the replica");
				run.target().failover();
				run.log().healed("clients on the new master");
			}
		}
	},

	/**
	 * {@code maxmemory} lowered under load: keys, locks and fencing counter included,
	 * evicted.
	 */
	EVICTION(false) {
		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			run.target().master().command("CONFIG", "SET", "maxmemory-policy", "allkeys-random");
			while (run.pause(1000, 2500)) {
				long used = Long.parseLong(memoryInfo(run, "used_memory"));
				run.log().injected("maxmemory " + (used + 100_000) + " and 2000 keys of 1 KB");
				run.target().master().command("CONFIG", "SET", "maxmemory", Long.toString(used + 100_000));
				String filler = "x".repeat(1024);
				try {
					run.target().admin().executePipelined((RedisCallback<Object>) (connection) -> {
						for (int i = 0; i < 2000; i++) {
							connection.stringCommands()
								.set(("filler:" + i).getBytes(), filler.getBytes(),
										org.springframework.data.redis.core.types.Expiration.seconds(1),
										org.springframework.data.redis.connection.RedisStringCommands.SetOption
											.upsert());
						}
						return null;
					});
				}
				catch (org.springframework.data.redis.connection.RedisPipelineException ex) {
					// some fillers were refused with OOM: memory is as full as it gets
				}
				run.target().master().command("CONFIG", "SET", "maxmemory", "0");
				run.log().healed("maxmemory off, evicted_keys " + memoryInfo(run, "evicted_keys"));
			}
		}
	},

	/** Random interrupts of the test JVM's workers, waiting or holding. */
	INTERRUPTS(true) {
		@Override
		public boolean storeFails() {
			return false;
		}

		@Override
		public void inject(FaultSchedule<FaultLayout> run) {
			Random random = run.log().random();
			while (run.pause(300, 1000)) {
				run.log().injected("interrupt burst");
				long burstEnd = System.nanoTime() + Duration.ofMillis(run.log().millisBetween(300, 1000)).toNanos();
				int sent = 0;
				while (System.nanoTime() - burstEnd < 0 && !run.ended()) {
					List<Thread> threads = run.workerThreads();
					threads.get(random.nextInt(threads.size())).interrupt();
					sent++;
					run.sleep(random.nextInt(10) + 1);
				}
				run.log().healed(sent + " interrupts sent");
			}
		}
	},

	/** {@link #NONE} with fair locks: the queue's baseline. */
	FAIR_NONE(NONE),

	/**
	 * {@link #CLIENT_KILL} with fair locks: queued waiters lose their connections and
	 * their release signals.
	 */
	FAIR_CLIENT_KILL(CLIENT_KILL),

	/** {@link #PROXY_RESET} with fair locks. */
	FAIR_PROXY_RESET(PROXY_RESET),

	/**
	 * {@link #PROXY_LOST_REPLY} with fair locks: a lost fair acquire reply is re-sent by
	 * Lettuce and runs twice, as does a lost reply of a waiter leaving the queue.
	 */
	FAIR_PROXY_LOST_REPLY(PROXY_LOST_REPLY);

	private final boolean inModel;

	private final String[] serverArgs;

	/** The class whose faults a fair variant injects; null for a plain class. */
	private final FaultClass plain;

	FaultClass(boolean inModel, String... serverArgs) {
		this.inModel = inModel;
		this.serverArgs = serverArgs;
		this.plain = null;
	}

	/**
	 * A variant of {@code plain}: the same faults, with every worker acquiring fairly.
	 */
	FaultClass(FaultClass plain) {
		this.inModel = plain.inModel;
		this.serverArgs = plain.serverArgs;
		this.plain = plain;
	}

	@Override
	public boolean inModel() {
		return this.inModel;
	}

	/**
	 * Whether the lock connections keep the client's default settings (Lettuce's 60 s
	 * command timeout, as Boot leaves it) rather than a command timeout of a lease; the
	 * workload's calls are then bounded by the store timeout alone, and the run checks
	 * that bound on every call.
	 */
	@Override
	public boolean clientDefaults() {
		return (this.plain != null) && this.plain.clientDefaults();
	}

	/** Whether the workers acquire with {@code fair(true)}. */
	@Override
	public boolean fair() {
		return this.plain != null;
	}

	@Override
	public FaultLayout start() {
		return (this.plain != null) ? this.plain.start() : FaultLayout.single(this.serverArgs);
	}

	/**
	 * Whether the fault makes Redis fail or time out; where it does not, every backend
	 * error is the library's own.
	 */
	@Override
	public boolean storeFails() {
		return this.plain == null || this.plain.storeFails();
	}

	/**
	 * Injects faults from the run's seeded schedule until the run ends, healing each. A
	 * fair variant injects those of its plain class; every plain class overrides this.
	 */
	public void inject(FaultSchedule<FaultLayout> run) {
		if (this.plain == null) {
			throw new IllegalStateException(name() + " injects no faults of its own");
		}
		this.plain.inject(run);
	}

	private static void killAndRestart(FaultSchedule<FaultLayout> run) {
		while (run.pause(1000, 3000)) {
			run.log().injected("kill -9 redis");
			run.target().restartMaster();
			run.log().healed("redis restarted");
		}
	}

	private static String memoryInfo(FaultSchedule<FaultLayout> run, String field) {
		java.util.Properties info = run.target()
			.admin()
			.execute((RedisCallback<java.util.Properties>) (connection) -> connection.serverCommands()
				.info(field.startsWith("evicted") ? "stats" : "memory"));
		return (info != null) ? info.getProperty(field, "?") : "?";
	}

}
