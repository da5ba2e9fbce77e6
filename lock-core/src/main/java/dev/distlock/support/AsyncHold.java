package dev.distlock.support;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockContext;
import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One action running under a held lease for a caller that does not wait on a thread
 * ({@link ContextLocking#execute}): it ends once, by the action's stage completing, by
 * the caller cancelling, or, with {@code on-lease-lost: interrupt}, by a loss; the lease
 * is released then, on a worker, and the caller's stage completes only after the release.
 */
final class AsyncHold<T> {

	private static final Log logger = LogFactory.getLog(AsyncHold.class);

	private final ContextLocking locking;

	private final Lease lease;

	private final CompletableFuture<T> result;

	private final AtomicBoolean ended = new AtomicBoolean();

	/** Set when a loss ended the hold with {@code on-lease-lost: interrupt}. */
	private volatile boolean interrupted;

	AsyncHold(ContextLocking locking, Lease lease, CompletableFuture<T> result) {
		this.locking = locking;
		this.lease = lease;
		this.result = result;
	}

	/**
	 * Calls {@code action} inside a {@link LockContext} scope of the lease, so that
	 * blocking acquisitions it makes before it returns re-enter the lock.
	 */
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
		Runnable stopListening = () -> {
		};
		if (this.locking.onLeaseLost(this.lease) == OnLeaseLost.INTERRUPT) {
			stopListening = this.locking.whenLost(this.lease, () -> {
				this.interrupted = true;
				end(null, null);
				cancelQuietly(work);
			});
		}
		Runnable listening = stopListening;
		this.result.whenComplete((value, failure) -> {
			if (failure instanceof CancellationException) {
				cancelQuietly(work);
				end(null, failure);
			}
		});
		work.whenComplete((value, failure) -> {
			listening.run();
			end(value, failure);
		});
	}

	/** Releases the lease, once, then completes the caller's stage if still open. */
	private void end(@Nullable T value, @Nullable Throwable failure) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		// The action's own failure reaches the caller unchanged.
		Throwable problem = (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause()
				: failure;
		// The caller's dependent stages run where the result completes: not on a thread
		// of
		// the store's client.
		this.locking.release(this.lease).whenCompleteAsync((done, releaseFailure) -> {
			Throwable outcome = outcome(problem, releaseFailure);
			if (outcome != null) {
				this.result.completeExceptionally(outcome);
			}
			else {
				this.result.complete(value);
			}
		}, this.locking::offload);
	}

	/** What the caller hears, given the action's failure and the release's. */
	private @Nullable Throwable outcome(@Nullable Throwable problem, @Nullable Throwable releaseFailure) {
		if (releaseFailure == null) {
			return problem;
		}
		if (releaseFailure instanceof LeaseLostException lost) {
			if (this.locking.onLeaseLost(this.lease) == OnLeaseLost.LOG && !this.interrupted) {
				logger.debug("Lease lost while held; on-lease-lost is LOG, so the call completes", lost);
				return problem;
			}
			if (problem == null) {
				return lost;
			}
			problem.addSuppressed(lost);
			return problem;
		}
		if (problem != null) {
			problem.addSuppressed(releaseFailure);
			return problem;
		}
		if (releaseFailure instanceof LockBackendException) {
			// The work is done and renewal has stopped: the lock frees itself when its
			// lease runs out, and failing the call would tell the caller it did not
			// happen.
			logger.warn("Could not release lock '" + this.lease.key() + "'; it expires when its lease runs out",
					releaseFailure);
			return null;
		}
		return releaseFailure;
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
