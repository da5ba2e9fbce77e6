package dev.distlock.contract;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waiting for a condition in a test, instead of sleeping for a guessed time.
 */
public final class Conditions {

	private Conditions() {
	}

	/**
	 * Polls {@code condition} every millisecond until it holds.
	 * @throws AssertionError naming {@code what} if it does not hold within
	 * {@code timeout}
	 */
	public static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Timed out after " + timeout + " waiting until " + what);
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

}
