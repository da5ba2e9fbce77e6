package dev.distlock.spi;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * One acquisition of a lock. Every operation checks ownership in the store: a handle
 * never renews or deletes a lock that another acquisition holds, even after its own lease
 * expired.
 */
public interface LockHandle {

	/** The key as the user gave it. */
	String key();

	/** The fencing token issued with this acquisition. */
	long fencingToken();

	/**
	 * Extends the lease to {@code leaseTime} from now if this acquisition still owns the
	 * lock.
	 * @return false if the lock expired or belongs to another owner
	 */
	boolean renew(Duration leaseTime);

	/**
	 * Deletes the lock if this acquisition still owns it. A second call returns false and
	 * deletes nothing.
	 * @return false if the lock had already expired or belongs to another owner
	 */
	boolean release();

	/**
	 * {@link #release()} without blocking the caller: the answer completes as
	 * {@code release()} returns, or fails with what it throws. By default
	 * {@code release()} runs on {@code executor}; a store whose client is asynchronous
	 * sends the release at once and completes the answer on the thread its reply comes in
	 * on, so what depends on the answer must not block.
	 * @param executor where a store that can only block makes the call
	 */
	default CompletionStage<Boolean> releaseAsync(Executor executor) {
		return CompletableFuture.supplyAsync(this::release, executor);
	}

	/**
	 * How long after the command that took or renewed a lock was <em>sent</em> its owner
	 * may count the lease as held: the lease less a margin for the store's clock running
	 * ahead of this JVM's monotonic clock (Redis expires keys on its wall clock, which
	 * may be slewed), 1% of the lease plus 2 ms, as the Redlock algorithm budgets for
	 * drift, and never less than half the lease. Measuring from the send alone would
	 * leave only the one-way latency as margin, which on loopback is tens of
	 * microseconds.
	 */
	static long validityNanos(Duration leaseTime) {
		long lease = leaseTime.toNanos();
		long drift = lease / 100 + 2_000_000;
		return Math.max(lease / 2, lease - drift);
	}

}
