package dev.distlock.support;

import java.time.Duration;

/**
 * How a {@link DefaultLockTemplate} hands a held lock to another thread of its JVM
 * without a store call ("lock cohorting"), on a store that reserves fencing-token blocks
 * ({@link dev.distlock.spi.LocalHandover}).
 *
 * <p>
 * When a thread releases a plain (not fair) lock while another thread of the same JVM
 * waits for it with the same lease time and auto-renew setting, the lock passes to that
 * thread in memory: it gets the next fencing token of the block reserved at the store
 * acquisition, and the store lease, its renewal and its deadline carry over. At most
 * {@code maxPasses} such passes follow one store acquisition, and none after
 * {@code maxTime} has passed since it was sent; then the lock goes back to the store, so
 * that waiters of other JVMs get their turn. When the store reports at that release that
 * a waiter of another JVM had marked the key
 * ({@link dev.distlock.spi.TokenBlock#releasedToWaiters()}), this JVM's waiters stand
 * back for a quarter of {@code maxTime} (at most their retry interval), so that the other
 * JVM's waiter takes the lock first.
 *
 * @param enabled whether locks are handed over locally at all
 * @param maxPasses the most local passes per store acquisition (the token block holds one
 * more token than this); 0 turns hand-over off
 * @param maxTime the longest a JVM keeps passing a lock locally after taking it from the
 * store; its waiters stand back a quarter of it after giving it back to a waiter of
 * another JVM
 */
public record HandoverSettings(boolean enabled, int maxPasses, Duration maxTime) {

	/**
	 * The default: on, at most 32 passes and 20 ms per store acquisition. A lock the
	 * store loses behind the JVM's back (outside the fault model: an eviction, a failover
	 * that loses writes) is reported to every holder it was passed through, and a token
	 * of its block never goes to a request that began after another JVM took it
	 * (guarantees.md, local hand-over); the fault suite passes every class with it on.
	 */
	public static final HandoverSettings DEFAULTS = new HandoverSettings(true, 32, Duration.ofMillis(20));

	/** On, at most 32 passes and 20 ms per store acquisition. */
	public static final HandoverSettings ON = new HandoverSettings(true, 32, Duration.ofMillis(20));

	/** No local hand-over: every holder takes the lock from the store. */
	public static final HandoverSettings OFF = new HandoverSettings(false, 0, Duration.ofMillis(20));

	/** The most passes a block may be reserved for. */
	public static final int MAX_PASSES_LIMIT = 1_000_000;

	public HandoverSettings {
		if (maxPasses < 0 || maxPasses > MAX_PASSES_LIMIT) {
			throw new IllegalArgumentException("distributed-lock.handover.max-passes must be between 0 and "
					+ MAX_PASSES_LIMIT + " but was " + maxPasses);
		}
		if (maxTime == null || maxTime.isNegative() || maxTime.isZero()) {
			throw new IllegalArgumentException(
					"distributed-lock.handover.max-time must be positive but was " + maxTime);
		}
	}

}
