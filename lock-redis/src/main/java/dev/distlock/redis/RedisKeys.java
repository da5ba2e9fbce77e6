package dev.distlock.redis;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * Maps user keys to Redis keys. A lock lives at {@code prefix + key}. The fencing counter
 * for it must share the lock's cluster slot (a script may only touch one slot) yet never
 * collide with a lock: it is the prefix itself (no lock key equals the prefix, as user
 * keys are never empty), preceded on a cluster by a hash tag that selects the lock's
 * slot. So a standalone server holds one counter, a cluster at most one per slot.
 */
final class RedisKeys {

	private final String prefix;

	private final boolean cluster;

	RedisKeys(String prefix, boolean cluster) {
		if (prefix.isEmpty() || prefix.startsWith("{")) {
			throw new IllegalArgumentException("key prefix must be non-empty and must not start with '{'");
		}
		this.prefix = prefix;
		this.cluster = cluster;
	}

	boolean isCluster() {
		return this.cluster;
	}

	String lockKey(String key) {
		return this.prefix + key;
	}

	/**
	 * The fair queue of a lock and its waiters' deadlines. They start with a hash tag of
	 * the lock's slot, and no lock key starts with '{' (the prefix may not), so they
	 * never collide with a lock, and the suffixes keep them apart from each other.
	 */
	String queueKey(String lockKey) {
		return slotTag(lockKey) + lockKey + ":queue";
	}

	String waiterDeadlinesKey(String lockKey) {
		return slotTag(lockKey) + lockKey + ":waiters";
	}

	/**
	 * The waiting writers' intents on a read-write lock (a sorted set), in the lock's
	 * slot; apart from every lock key as {@link #queueKey} is.
	 */
	String intentsKey(String lockKey) {
		return slotTag(lockKey) + lockKey + ":intents";
	}

	/**
	 * The semaphore of a user key (a sorted set of permits), in the slot of the lock of
	 * the same key (so it shares that slot's fencing counter) but never equal to a lock
	 * key: a semaphore and a lock of one key are unrelated.
	 */
	String permitsKey(String lockKey) {
		return slotTag(lockKey) + lockKey + ":permits";
	}

	private static String slotTag(String lockKey) {
		return "{" + SlotTags.forSlot(ClusterSlotHashUtil.calculateSlot(lockKey)) + "}";
	}

	/** The classic release channel, one for all locks. */
	String releaseChannel() {
		return this.prefix + "released";
	}

	/**
	 * The sharded release channel of a cluster slot: the classic name behind a hash tag
	 * of that slot, so that a script touching the slot's keys may {@code SPUBLISH} to it.
	 */
	String releaseChannel(int slot) {
		return "{" + SlotTags.forSlot(slot) + "}" + releaseChannel();
	}

	static int slotOf(String lockKey) {
		return ClusterSlotHashUtil.calculateSlot(lockKey);
	}

	String fenceKey(String lockKey) {
		if (!this.cluster) {
			return this.prefix;
		}
		return "{" + SlotTags.forSlot(ClusterSlotHashUtil.calculateSlot(lockKey)) + "}" + this.prefix;
	}

}
