package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting for a condition in a test instead of sleeping for a guessed time. (The
 * published {@code Conditions} lives in lock-contract-tests, which depends on this
 * module.)
 */
public final class Await {

	private Await() {
	}

	/**
	 * Polls {@code condition} every millisecond until it holds.
	 * @throws AssertionError naming {@code what} if it does not hold within
	 * {@code timeout}
	 */
	public static void until(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Timed out after " + timeout + " waiting until " + what);
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

	/** Until {@code thread} is parked with a timeout: a waiter between two attempts. */
	public static void parked(Thread thread) {
		until(thread.getName() + " waits", Duration.ofSeconds(10),
				() -> thread.getState() == Thread.State.TIMED_WAITING);
	}

}
