package dev.distlock.support;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;

/**
 * {@link AsyncLockTemplate} over a {@link DefaultLockTemplate}: every wait is the
 * template's own asynchronous one ({@link DefaultLockTemplate#acquireAsync}), so the
 * lines, take-overs, renewal and loss detection are those of the blocking calls, and no
 * thread is parked while a caller waits. An action runs as {@link ContextLocking#execute}
 * runs it, so a release makes no store call on the thread that completes the action.
 */
public final class DefaultAsyncLockTemplate implements AsyncLockTemplate {

	private final DefaultLockTemplate template;

	private final ContextLocking locking;

	public DefaultAsyncLockTemplate(DefaultLockTemplate template) {
		this.template = template;
		this.locking = new ContextLocking(template);
	}

	@Override
	public CompletableFuture<Lease> acquire(String key, LockOptions options) {
		return required(this.template.acquireAsync(key, options), () -> this.template.notAcquired(key, options));
	}

	@Override
	public CompletableFuture<Optional<Lease>> tryAcquire(String key, LockOptions options) {
		CompletableFuture<Optional<Lease>> wait = this.template.acquireAsync(key, options);
		CompletableFuture<Optional<Lease>> result = new CompletableFuture<>();
		wait.whenComplete((lease, failure) -> {
			if (failure != null) {
				result.completeExceptionally(Observations.unwrapped(failure));
			}
			else if (!result.complete(lease) && lease.isPresent()) {
				releaseQuietly(lease.get());
			}
		});
		giveUpWaitOnCancel(result, wait);
		return result;
	}

	@Override
	public CompletableFuture<MultiLease> acquireAll(Collection<String> keys, LockOptions options) {
		return required(this.template.acquireAllAsync(keys, options),
				() -> Holdings.notAllAcquired(MultiKeyAcquirer.sortedKeys(keys), this.template.settings(options)));
	}

	/**
	 * The lease {@code wait} completes with, or {@code notAcquired} once it completes
	 * empty; a lease that comes after the result was cancelled is released here, since
	 * nobody else will.
	 */
	private <L extends Lease> CompletableFuture<L> required(CompletableFuture<Optional<L>> wait,
			Supplier<RuntimeException> notAcquired) {
		CompletableFuture<L> result = new CompletableFuture<>();
		wait.whenComplete((lease, failure) -> {
			if (failure != null) {
				result.completeExceptionally(Observations.unwrapped(failure));
			}
			else if (lease.isEmpty()) {
				result.completeExceptionally(notAcquired.get());
			}
			else if (!result.complete(lease.get())) {
				releaseQuietly(lease.get());
			}
		});
		giveUpWaitOnCancel(result, wait);
		return result;
	}

	@Override
	public <T> CompletableFuture<T> execute(String key, LockOptions options,
			Supplier<? extends CompletionStage<T>> action) {
		return this.locking.execute(this.template.acquireAsync(key, options),
				() -> this.template.notAcquired(key, options), null, action);
	}

	@Override
	public <T> CompletableFuture<T> execute(String key, Supplier<? extends CompletionStage<T>> action) {
		return execute(key, LockOptions.defaults(), action);
	}

	@Override
	public CompletableFuture<Void> release(Lease lease) {
		return this.locking.release(lease);
	}

	/** Cancelling what the caller got cancels the wait behind it. */
	private static void giveUpWaitOnCancel(CompletableFuture<?> result, CompletableFuture<?> wait) {
		result.whenComplete((value, failure) -> {
			if (failure instanceof CancellationException) {
				wait.cancel(false);
			}
		});
	}

	private void releaseQuietly(Lease lease) {
		this.locking.releaseQuietly(lease);
	}

}
