package dev.distlock.spi;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The outcome of one {@link LockProvider#tryLock(LockRequest)} call.
 */
public sealed interface LockAttempt {

	/** The lock was taken; the handle is the only way to renew or release it. */
	record Acquired(LockHandle handle) implements LockAttempt {
	}

	/**
	 * Every key of a {@link LockKind#MULTI} request was taken; one handle per key, in the
	 * order of the request's keys.
	 */
	record AcquiredAll(List<LockHandle> handles) implements LockAttempt {

		public AcquiredAll {
			handles = List.copyOf(handles);
		}

	}

	/**
	 * Another owner holds the lock; nothing is held.
	 *
	 * @param remaining the holder's remaining lease as seen by the store, zero when
	 * unknown
	 * @param key for a {@link LockKind#MULTI} request, the key found busy; null for a
	 * single-key request (its key)
	 */
	record Busy(Duration remaining, @Nullable String key) implements LockAttempt {

		/** The request's single key is busy. */
		public Busy(Duration remaining) {
			this(remaining, null);
		}

	}

	/**
	 * The answer of a store whose attempt runs on the calling thread: completed with what
	 * {@code attempt} returns, or failed with what it throws.
	 */
	static CompletionStage<LockAttempt> of(Supplier<LockAttempt> attempt) {
		try {
			return CompletableFuture.completedFuture(attempt.get());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Waits for a store's answer (not for the lock: the attempt itself never waits for
	 * it), and throws a failure exactly as the store raised it, not wrapped.
	 */
	static LockAttempt join(CompletionStage<LockAttempt> answer) {
		try {
			return answer.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

}
