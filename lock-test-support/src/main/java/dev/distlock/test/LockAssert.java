package dev.distlock.test;

import java.util.Optional;

import dev.distlock.Lease;
import dev.distlock.LockContext;

/**
 * Assertions for code that must run under a lock, called from inside that code (a test's
 * callback, a spy, a test double the locked method calls): the current thread runs in the
 * scope of a held lease, optionally on a given key. To check from outside which keys a
 * call locked, use {@link LockRecorder}.
 */
public final class LockAssert {

	private LockAssert() {
	}

	/**
	 * Fails unless the current thread runs inside a held lock (a {@code @DistributedLock}
	 * method, a {@code LockTemplate.execute}/{@code run} body).
	 * @return the innermost lease
	 */
	public static Lease assertLocked() {
		Optional<Lease> current = LockContext.current();
		if (current.isEmpty()) {
			throw new AssertionError("Expected to run under a distributed lock, but thread '"
					+ Thread.currentThread().getName() + "' holds none");
		}
		if (!current.get().isHeld()) {
			throw new AssertionError("Expected to run under a distributed lock, but the lease on '"
					+ current.get().key() + "' is no longer held (released or lost)");
		}
		return current.get();
	}

	/**
	 * Fails unless the current thread runs inside a held lock on {@code key}.
	 * @return that lease
	 */
	public static Lease assertLocked(String key) {
		assertLocked();
		for (Lease lease : LockContext.held()) {
			if (lease.key().equals(key) && lease.isHeld()) {
				return lease;
			}
		}
		throw new AssertionError(
				"Expected to run under the lock on '" + key + "', but thread '" + Thread.currentThread().getName()
						+ "' holds only " + LockContext.held().stream().map(Lease::key).toList());
	}

	/** Fails if the current thread runs inside any lock. */
	public static void assertNotLocked() {
		if (!LockContext.held().isEmpty()) {
			throw new AssertionError(
					"Expected to run without a distributed lock, but thread '" + Thread.currentThread().getName()
							+ "' holds " + LockContext.held().stream().map(Lease::key).toList());
		}
	}

}
