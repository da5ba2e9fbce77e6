package dev.distlock.harness.fault;

/**
 * The resource the fault workload's locks protect, one per lock key: a value, an
 * occupancy counter and a fence, as a database row with a {@code fence} column would
 * have. Entering is a fenced read (a token below the fence is refused, otherwise it
 * becomes the fence), writing is a fenced write. So once a newer holder has entered,
 * every write of an older one is rejected, whatever the order of their writes; and a
 * holder that finds the occupancy above one has met another holder inside.
 *
 * <p>
 * It must live outside the lock store, where no fault touches it, and be shared by every
 * JVM of a run ({@code RedisFencedResource} in {@code lock-test-harness-redis} runs on a
 * redis-server of its own). Calls must be atomic on the resource's side and must not be
 * abandoned when the calling thread is interrupted (the run interrupts workers to test
 * the lock library, and a call half-known, applied but its reply dropped, would show as a
 * lost update): implementations run them where interrupts do not reach.
 */
public interface FencedResource extends AutoCloseable {

	/** Enters with {@code token}: occupancy after entering, and the value if admitted. */
	Entry enter(String lockKey, long token);

	/**
	 * Writes {@code value} with {@code token}: false, and rejected, if a greater token
	 * entered or wrote since.
	 */
	boolean write(String lockKey, long token, long value);

	/** Leaves: the occupancy goes down by one. */
	void exit(String lockKey);

	/** How many writes were accepted on the key so far. */
	long accepted(String lockKey);

	/** The value now; 0 if never written. */
	long value(String lockKey);

	@Override
	void close();

	/**
	 * What entering found.
	 *
	 * @param occupancy holders inside, this one included
	 * @param admitted whether the token was not below the fence
	 * @param value the value, if admitted
	 */
	record Entry(long occupancy, boolean admitted, long value) {
	}

}
