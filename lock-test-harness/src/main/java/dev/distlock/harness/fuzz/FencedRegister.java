package dev.distlock.harness.fuzz;

import java.util.List;

/**
 * A resource that fences its writers, as a database row with a {@code fence} column would
 * ({@code UPDATE ... SET value = ?, fence = ? WHERE id = ? AND fence <= ?}): a write
 * carrying a fencing token lower than the last accepted one is rejected; the same holder
 * may write more than once. Every accepted write is logged, so a checker can look for a
 * stale write that got through. It must live outside the lock store and be shared by
 * every JVM ({@code RedisFencedRegister} in {@code lock-test-harness-redis}).
 */
public interface FencedRegister extends AutoCloseable {

	/**
	 * Writes {@code value} unless an accepted write carried a greater token; returns
	 * whether it was.
	 */
	boolean write(long token, String value);

	/** The fencing tokens of the accepted writes, in order. */
	List<Long> acceptedTokens();

	/** How many writes were rejected. */
	long rejected();

	/** The value last accepted, or null. */
	@org.jspecify.annotations.Nullable
	String value();

	@Override
	void close();

}
