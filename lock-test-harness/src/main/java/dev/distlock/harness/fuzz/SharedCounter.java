package dev.distlock.harness.fuzz;

/**
 * The value the {@link FuzzLoop} increments under a lock by reading it, pausing and
 * writing it back (so that two holders at once lose an increment, which an atomic counter
 * would hide), and an occupancy marker that counts the holders inside. It must live
 * outside the lock store and be shared by every JVM ({@code RedisSharedCounter} in
 * {@code lock-test-harness-redis}). Each call is one atomic step on the resource.
 */
public interface SharedCounter extends AutoCloseable {

	/** Marks one more holder inside; returns how many are inside now. */
	long enter();

	/** Marks one holder gone. */
	void exit();

	/** Holders inside now: 0 once every loop has finished. */
	long inside();

	/** The counter; 0 if never written. */
	long read();

	/** Sets the counter. */
	void write(long value);

	@Override
	void close();

}
