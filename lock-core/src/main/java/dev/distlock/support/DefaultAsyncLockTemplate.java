package dev.distlock.support;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * {@link AsyncLockTemplate} over a {@link DefaultLockTemplate}: every wait is the
 * template's own asynchronous one ({@link DefaultLockTemplate#acquireAsync}), so the
 * lines, take-overs, renewal and loss detection are those of the blocking calls, and no
 * thread is parked while a caller waits.
 */
public final class DefaultAsyncLockTemplate implements AsyncLockTemplate {

	private static final Log logger = LogFactory.getLog(DefaultAsyncLockTemplate.class);

	private final DefaultLockTemplate template;

	public DefaultAsyncLockTemplate(DefaultLockTemplate template) {
		this.template = template;
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
	private static <L extends Lease> CompletableFuture<L> required(CompletableFuture<Optional<L>> wait,
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
		CompletableFuture<Lease> acquired = acquire(key, options);
		CompletableFuture<T> result = new CompletableFuture<>();
		acquired.whenComplete((lease, failure) -> {
			if (failure != null) {
				result.completeExceptionally(Observations.unwrapped(failure));
			}
			else if (result.isDone()) {
				// Cancelled as the lock was taken: the action never starts.
				releaseQuietly(lease);
			}
			else {
				new HeldRun<>(lease, result).start(action);
			}
		});
		giveUpWaitOnCancel(result, acquired);
		return result;
	}

	@Override
	public <T> CompletableFuture<T> execute(String key, Supplier<? extends CompletionStage<T>> action) {
		return execute(key, LockOptions.defaults(), action);
	}

	/** Cancelling what the caller got cancels the wait behind it. */
	private static void giveUpWaitOnCancel(CompletableFuture<?> result, CompletableFuture<?> wait) {
		result.whenComplete((value, failure) -> {
			if (failure instanceof CancellationException) {
				wait.cancel(false);
			}
		});
	}

	private static void releaseQuietly(Lease lease) {
		try {
			lease.release();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release lock '" + lease.key() + "' taken for a caller that gave up", ex);
		}
	}

	/**
	 * One action running under a held lease: it ends once, by the action's stage
	 * completing or by the caller cancelling, and the lease is released then.
	 */
	private static final class HeldRun<T> {

		private final Lease lease;

		private final CompletableFuture<T> result;

		private final AtomicBoolean ended = new AtomicBoolean();

		HeldRun(Lease lease, CompletableFuture<T> result) {
			this.lease = lease;
			this.result = result;
		}

		void start(Supplier<? extends CompletionStage<T>> action) {
			CompletionStage<T> work;
			try (LockContext.Scope scope = LockContext.open(this.lease)) {
				work = action.get();
				if (work == null) {
					throw new NullPointerException("The action under lock '" + this.lease.key()
							+ "' returned no CompletionStage; return a completed one for a result known at once");
				}
			}
			catch (Throwable ex) {
				end(null, ex);
				return;
			}
			this.result.whenComplete((value, failure) -> {
				if (failure instanceof CancellationException) {
					cancelQuietly(work);
					end(null, failure);
				}
			});
			work.whenComplete(this::end);
		}

		/** Releases the lease, once, and completes the caller's stage if still open. */
		private void end(@Nullable T value, @Nullable Throwable failure) {
			if (!this.ended.compareAndSet(false, true)) {
				return;
			}
			// The action's own failure reaches the caller unchanged, as with execute.
			Throwable problem = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			LeaseLostException lost = null;
			try {
				this.lease.release();
			}
			catch (LeaseLostException ex) {
				if (LeasedCall.onLeaseLost(this.lease) != OnLeaseLost.LOG) {
					lost = ex;
				}
				else {
					logger.debug("Lease lost while held; on-lease-lost is LOG, so the call completes", ex);
				}
			}
			catch (LockBackendException ex) {
				if (problem != null) {
					problem.addSuppressed(ex);
				}
				else {
					// The work is done and renewal has stopped: the lock frees itself
					// when its lease runs out, and failing the call here would tell the
					// caller it did not happen.
					logger.warn("Could not release lock '" + this.lease.key() + "'; it expires when its lease runs out",
							ex);
				}
			}
			catch (RuntimeException ex) {
				if (problem == null) {
					problem = ex;
				}
				else {
					problem.addSuppressed(ex);
				}
			}
			if (problem != null && lost != null && problem != lost) {
				problem.addSuppressed(lost);
			}
			if (problem != null) {
				this.result.completeExceptionally(problem);
			}
			else if (lost != null) {
				this.result.completeExceptionally(lost);
			}
			else {
				this.result.complete(value);
			}
		}

		private static void cancelQuietly(CompletionStage<?> work) {
			try {
				work.toCompletableFuture().cancel(false);
			}
			catch (UnsupportedOperationException ex) {
				// A stage that cannot be cancelled runs on without the lock.
			}
		}

	}

}
