package dev.distlock.support;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * A waiter's attempts at the store, on the right thread: a blocking caller's on its own
 * thread, and those of a wait that holds no thread on the store's
 * {@link LockProvider#callExecutor() call executor} when its calls block, so that they
 * never hold the machinery's few wait workers.
 */
final class StoreCalls {

	private final LockProvider provider;

	private final @Nullable Executor away;

	StoreCalls(LockProvider provider) {
		this.provider = provider;
		Optional<Executor> executor = provider.callExecutor();
		this.away = executor.orElse(null);
	}

	/**
	 * One attempt, as a future.
	 * @param caller the blocking caller whose thread runs the wait; null for a wait that
	 * holds no thread
	 */
	CompletableFuture<LockAttempt> tryLock(LockRequest request, @Nullable Thread caller) {
		Executor executor = this.away;
		if (executor == null || caller != null) {
			return this.provider.tryLock(request).toCompletableFuture();
		}
		CompletableFuture<LockAttempt> answer = new CompletableFuture<>();
		try {
			executor.execute(() -> {
				try {
					this.provider.tryLock(request).whenComplete((attempt, failure) -> {
						if (failure != null) {
							answer.completeExceptionally(failure);
						}
						else {
							answer.complete(attempt);
						}
					});
				}
				catch (RuntimeException | Error ex) {
					answer.completeExceptionally(ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			answer.completeExceptionally(new LockBackendException(request.key(),
					"Cannot lock '" + request.key() + "': the " + this.provider.storeName() + " store has been closed",
					ex));
		}
		return answer;
	}

}
