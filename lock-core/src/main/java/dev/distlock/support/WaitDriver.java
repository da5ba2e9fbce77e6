package dev.distlock.support;

import org.jspecify.annotations.Nullable;

/**
 * Where the steps of a waiter's {@link LockWait} run, and how its pauses are timed: on
 * the thread of a blocking caller, which runs them while it waits for its answer
 * ({@link CallerThread}), or on the template's workers, timed by the shared scheduler, so
 * that a waiter holds no thread between steps ({@link SharedWaitDriver}). A driver runs
 * the steps of one waiter one at a time.
 */
interface WaitDriver {

	/**
	 * Runs {@code step} soon; never on the caller's stack when that is a store's thread.
	 */
	void execute(Runnable step);

	/** Runs {@code step} after {@code delayNanos}, unless cancelled first. */
	Timer schedule(Runnable step, long delayNanos);

	/**
	 * Whether the waiter's caller was interrupted: a blocking caller stops waiting then,
	 * as it always did; a waiter without a thread of its own is cancelled instead.
	 */
	default boolean interrupted() {
		return false;
	}

	/**
	 * Whether a grant may end the wait on the thread the store answered on, instead of on
	 * a step of this driver: only for callers that move on to threads of their own
	 * whatever thread answers them (a reactive pipeline resuming on its scheduler), so
	 * that no work of theirs runs on a store client's thread. Any other answer is still
	 * handled on a step.
	 */
	default boolean grantsWhereAnswered() {
		return false;
	}

	/**
	 * The thread that waits, told of a loss of the lease it gets; null for a wait that
	 * holds no thread.
	 */
	default @Nullable Thread thread() {
		return null;
	}

	/** A step scheduled for later. */
	@FunctionalInterface
	interface Timer {

		Timer NONE = () -> {
		};

		void cancel();

	}

}
