package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.OnLeaseLost;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of distributed locks ({@code distributed-lock.*}).
 */
@ConfigurationProperties("distributed-lock")
public class DistributedLockProperties {

	/**
	 * Whether to configure distributed locks. When false, no lock beans are created
	 * and @DistributedLock methods are not intercepted.
	 */
	private boolean enabled = true;

	/**
	 * The store to lock in: redis, redlock, jdbc, zookeeper, or in-memory (this JVM only,
	 * for tests and single-instance applications). Needed only when several stores are
	 * available; the in-memory store is used only when named here.
	 */
	private @Nullable String store;

	/**
	 * Settings of the Redis store.
	 */
	private final Redis redis = new Redis();

	/**
	 * Local hand-over: a lock released while another thread of this JVM waits for it
	 * passes to that thread in memory, without a store call.
	 */
	private final Handover handover = new Handover();

	/**
	 * Default time to wait for a lock before giving up. Zero tries once.
	 */
	private Duration waitTime = Duration.ofSeconds(5);

	/**
	 * Default lease: how long a lock outlives a crashed holder, and, without auto-renew,
	 * how long it is held at most.
	 */
	private Duration leaseTime = Duration.ofSeconds(30);

	/**
	 * Whether held locks are renewed in the background (every third of the lease) for as
	 * long as they are held.
	 */
	private boolean autoRenew = true;

	/**
	 * Fallback poll interval while waiting for a lock: waiters are woken by the release,
	 * and retry at this interval only in case a release signal was lost (with jittered
	 * backoff up to it until the store's signals are up). A waiter never sleeps past the
	 * holder's lease deadline or its own wait deadline.
	 */
	private Duration retryInterval = Duration.ofMillis(100);

	/**
	 * What happens, besides a LockLostEvent and a warning, when a held lease is found
	 * lost: fail-on-exit (the locked call throws LeaseLostException when it ends),
	 * interrupt (also interrupt the holder thread at once), or log (the call completes
	 * normally).
	 */
	private OnLeaseLost onLeaseLost = OnLeaseLost.FAIL_ON_EXIT;

	/**
	 * Whether waiters take a lock in the order they queued for it, across JVMs (a queue
	 * in Redis), rather than whoever asks first after a release. A waiter that dies
	 * leaves the queue after three retry intervals (at least 1s).
	 */
	private boolean fair = false;

	/**
	 * Whether @DistributedLock key expressions may use type references (T(...)) and
	 * constructors (new ...). Off: a key needs neither, and an expression that can reach
	 * any class is a risk.
	 */
	private boolean allowTypeReferencesInKeys = false;

	/**
	 * Whether a lock taken inside an active transaction (an outer @Transactional or
	 * TransactionTemplate) by a
	 * @DistributedLock method or LockTemplate.execute is kept, and renewed, until that
	 * transaction has completed, so that the next holder never reads uncommitted data.
	 */
	private boolean releaseAfterCommit = true;

	/**
	 * The longest a caller waits for the store in one call (an acquire attempt, a
	 * release, a renewal), whatever the client's own command timeout (Spring Boot's
	 * Lettuce default is 60s). An acquire ends within its wait time plus at most this
	 * bound; a store that does not answer in time fails the call with
	 * LockBackendException.
	 */
	private Duration storeTimeout = Duration.ofSeconds(3);

	/**
	 * Order of the @DistributedLock advisor. The default places it outside @Transactional
	 * (lowest precedence) so a lock is released only after the transaction completes.
	 */
	private int order = 2147483547;

	/**
	 * Named option sets, chosen by @DistributedLock(name = ...). Each unset value falls
	 * back to the global one.
	 */
	private Map<String, Lock> locks = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getWaitTime() {
		return this.waitTime;
	}

	public void setWaitTime(Duration waitTime) {
		this.waitTime = waitTime;
	}

	public Duration getLeaseTime() {
		return this.leaseTime;
	}

	public void setLeaseTime(Duration leaseTime) {
		this.leaseTime = leaseTime;
	}

	public boolean isAutoRenew() {
		return this.autoRenew;
	}

	public void setAutoRenew(boolean autoRenew) {
		this.autoRenew = autoRenew;
	}

	public Duration getRetryInterval() {
		return this.retryInterval;
	}

	public void setRetryInterval(Duration retryInterval) {
		this.retryInterval = retryInterval;
	}

	public OnLeaseLost getOnLeaseLost() {
		return this.onLeaseLost;
	}

	public void setOnLeaseLost(OnLeaseLost onLeaseLost) {
		this.onLeaseLost = onLeaseLost;
	}

	public boolean isAllowTypeReferencesInKeys() {
		return this.allowTypeReferencesInKeys;
	}

	public void setAllowTypeReferencesInKeys(boolean allowTypeReferencesInKeys) {
		this.allowTypeReferencesInKeys = allowTypeReferencesInKeys;
	}

	public boolean isFair() {
		return this.fair;
	}

	public void setFair(boolean fair) {
		this.fair = fair;
	}

	public boolean isReleaseAfterCommit() {
		return this.releaseAfterCommit;
	}

	public void setReleaseAfterCommit(boolean releaseAfterCommit) {
		this.releaseAfterCommit = releaseAfterCommit;
	}

	public @Nullable String getStore() {
		return this.store;
	}

	public void setStore(@Nullable String store) {
		this.store = store;
	}

	public Handover getHandover() {
		return this.handover;
	}

	public Redis getRedis() {
		return this.redis;
	}

	public Duration getStoreTimeout() {
		return this.storeTimeout;
	}

	public void setStoreTimeout(Duration storeTimeout) {
		this.storeTimeout = storeTimeout;
	}

	public int getOrder() {
		return this.order;
	}

	public void setOrder(int order) {
		this.order = order;
	}

	public Map<String, Lock> getLocks() {
		return this.locks;
	}

	public void setLocks(Map<String, Lock> locks) {
		this.locks = locks;
	}

	/**
	 * One named option set ({@code distributed-lock.locks.<name>.*}).
	 */
	/**
	 * Local hand-over ("lock cohorting"), under distributed-lock.handover: the store
	 * holds the lock for the JVM, and a release passes it to another thread of the same
	 * JVM in memory, with the next fencing token of a block the store reserved at the
	 * acquire, the same lease, renewal and loss detection. Plain locks only (never fair
	 * locks, read locks, semaphores or multi-key locks), on stores that reserve token
	 * blocks (Redis, in-memory). After max-passes passes or max-time, the lock goes back
	 * to the store so that waiters of other JVMs get their turn.
	 */
	public static class Handover {

		/**
		 * Whether a released lock passes to a waiting thread of the same JVM in memory.
		 * On by default; when off, every holder takes the lock from the store.
		 */
		private boolean enabled = true;

		/**
		 * The most local passes after one store acquisition (each acquire reserves this
		 * many fencing tokens more); then the lock goes back to the store. 0 turns local
		 * hand-over off.
		 */
		private int maxPasses = 32;

		/**
		 * The longest a JVM keeps passing a lock locally after taking it from the store;
		 * a release after it goes to the store. This JVM's waiters stand back for a
		 * quarter of it (at most their retry interval) after a release that a waiter of
		 * another JVM had asked for, so that one takes the lock first.
		 */
		private Duration maxTime = Duration.ofMillis(20);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxPasses() {
			return this.maxPasses;
		}

		public void setMaxPasses(int maxPasses) {
			this.maxPasses = maxPasses;
		}

		public Duration getMaxTime() {
			return this.maxTime;
		}

		public void setMaxTime(Duration maxTime) {
			this.maxTime = maxTime;
		}

	}

	/** Settings of the Redis store, under distributed-lock.redis. */
	public static class Redis {

		/**
		 * Prefix of every lock key in Redis. Must not be empty or start with '{'.
		 */
		private String keyPrefix = "lock:";

		/**
		 * Failover guard: how many replicas must acknowledge (WAIT) each acquire before
		 * it counts. An acquire that fewer replicas acknowledge in time is released and
		 * fails with LockBackendException. 0 turns the guard off. Narrows, but does not
		 * close, the window in which a failover loses a lock. Not supported on a Redis
		 * Cluster yet: a value above 0 there fails startup.
		 */
		private int waitForReplicas = 0;

		/**
		 * How long an acquire waits for the replicas of
		 * distributed-lock.redis.wait-for-replicas to acknowledge it; shorter than
		 * distributed-lock.store-timeout.
		 */
		private Duration waitForReplicasTimeout = Duration.ofMillis(100);

		public String getKeyPrefix() {
			return this.keyPrefix;
		}

		public void setKeyPrefix(String keyPrefix) {
			this.keyPrefix = keyPrefix;
		}

		public int getWaitForReplicas() {
			return this.waitForReplicas;
		}

		public void setWaitForReplicas(int waitForReplicas) {
			this.waitForReplicas = waitForReplicas;
		}

		public Duration getWaitForReplicasTimeout() {
			return this.waitForReplicasTimeout;
		}

		public void setWaitForReplicasTimeout(Duration waitForReplicasTimeout) {
			this.waitForReplicasTimeout = waitForReplicasTimeout;
		}

	}

	public static class Lock {

		/**
		 * Time to wait for this lock. Defaults to distributed-lock.wait-time.
		 */
		private @Nullable Duration waitTime;

		/**
		 * Lease of this lock. Defaults to distributed-lock.lease-time.
		 */
		private @Nullable Duration leaseTime;

		/**
		 * Whether to renew this lock while held. Defaults to distributed-lock.auto-renew.
		 */
		private @Nullable Boolean autoRenew;

		/**
		 * Longest pause between attempts for this lock. Defaults to
		 * distributed-lock.retry-interval.
		 */
		private @Nullable Duration retryInterval;

		/**
		 * What happens when this lock's lease is lost while held. Defaults to
		 * distributed-lock.on-lease-lost.
		 */
		private @Nullable OnLeaseLost onLeaseLost;

		/**
		 * Whether waiters for this lock are served in queue order across JVMs. Defaults
		 * to distributed-lock.fair.
		 */
		private @Nullable Boolean fair;

		public @Nullable Boolean getFair() {
			return this.fair;
		}

		public void setFair(@Nullable Boolean fair) {
			this.fair = fair;
		}

		public @Nullable OnLeaseLost getOnLeaseLost() {
			return this.onLeaseLost;
		}

		public void setOnLeaseLost(@Nullable OnLeaseLost onLeaseLost) {
			this.onLeaseLost = onLeaseLost;
		}

		public @Nullable Duration getWaitTime() {
			return this.waitTime;
		}

		public void setWaitTime(@Nullable Duration waitTime) {
			this.waitTime = waitTime;
		}

		public @Nullable Duration getLeaseTime() {
			return this.leaseTime;
		}

		public void setLeaseTime(@Nullable Duration leaseTime) {
			this.leaseTime = leaseTime;
		}

		public @Nullable Boolean getAutoRenew() {
			return this.autoRenew;
		}

		public void setAutoRenew(@Nullable Boolean autoRenew) {
			this.autoRenew = autoRenew;
		}

		public @Nullable Duration getRetryInterval() {
			return this.retryInterval;
		}

		public void setRetryInterval(@Nullable Duration retryInterval) {
			this.retryInterval = retryInterval;
		}

	}

}
