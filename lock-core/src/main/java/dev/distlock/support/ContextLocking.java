package dev.distlock.support;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The locking of a {@link DefaultLockTemplate} for callers whose scope is carried by a
 * context rather than run by a thread: a reactive pipeline (its Reactor {@code Context}),
 * a coroutine, an asynchronous method. The reactive template and the annotation's
 * asynchronous path are built on it.
 *
 * <ul>
 * <li>Re-entry follows the scope the caller passes (its leases, innermost first), never
 * the calling thread: a scope that holds the key is re-entered without a store call.</li>
 * <li>The calling thread never makes a store call: the first attempt, like every later
 * one, runs on one of the template's wait workers, and a release either goes to the store
 * without waiting or runs on a worker, so an event loop that asks for or gives back a
 * lock is never blocked.</li>
 * <li>Nothing waits on a thread: the wait is the template's own asynchronous one, with
 * every kind of hold, line, take-over, renewal and loss detection of the blocking
 * calls.</li>
 * </ul>
 * Every future returned here may be cancelled: a cancelled wait is given up and a lock
 * taken meanwhile is released.
 */
public final class ContextLocking {

	private static final Log logger = LogFactory.getLog(ContextLocking.class);

	private final DefaultLockTemplate template;

	private final boolean callerResumesElsewhere;

	public ContextLocking(DefaultLockTemplate template) {
		this(template, false);
	}

	/**
	 * @param callerResumesElsewhere whether the caller moves every answer of
	 * {@link #acquire} to a thread of its own before its work runs (a reactive pipeline
	 * resuming on its scheduler): the answer may then complete on the thread the store
	 * answered on, sparing a hop to a worker
	 */
	public ContextLocking(DefaultLockTemplate template, boolean callerResumesElsewhere) {
		this.template = template;
		this.callerResumesElsewhere = callerResumesElsewhere;
	}

	/**
	 * Takes {@code key}, re-entering it if a lease of {@code scope} holds it.
	 * @param scope the leases of the caller's scope, innermost first
	 * @return completes with the lease, or empty once the wait time ran out; fails with
	 * what {@link DefaultLockTemplate#acquire} would throw
	 */
	public CompletableFuture<Optional<Lease>> acquire(List<Lease> scope, String key, LockOptions options) {
		LockSettings settings = this.template.settings(options);
		ManagedLease held = Reentry.inContext(scope, this.template, key, settings);
		if (held != null) {
			return CompletableFuture.completedFuture(Optional.of(held.enter()));
		}
		this.template.check(key, settings);
		if (this.template.storeAnswersWithoutBlocking()) {
			return relayed(this.template.waitAsync(key, settings, true, this.callerResumesElsewhere));
		}
		return offloaded(() -> this.template.waitAsync(key, settings, false, false));
	}

	/**
	 * Takes every one of {@code keys}, all or none, re-entering those a lease of
	 * {@code scope} holds.
	 * @return completes with the lease of all keys, or empty once the wait time ran out
	 */
	public CompletableFuture<Optional<MultiLease>> acquireAll(List<Lease> scope, Collection<String> keys,
			LockOptions options) {
		LockSettings settings = this.template.settings(options);
		List<String> sorted = MultiKeyAcquirer.sortedKeys(keys);
		LockSettings plain = this.template.settings(LockOptions.defaults());
		Function<String, @Nullable ManagedLease> reentrant = (key) -> Reentry.inContext(scope, this.template, key,
				plain);
		return offloaded(() -> this.template.waitAllAsync(sorted, settings, reentrant));
	}

	/**
	 * Starts {@code wait} on a worker; cancelling the answer cancels the wait, and a lock
	 * the answer no longer takes is released.
	 */
	private <L extends Lease> CompletableFuture<Optional<L>> offloaded(Supplier<CompletableFuture<Optional<L>>> wait) {
		CompletableFuture<Optional<L>> answer = new CompletableFuture<>();
		this.template.offload(() -> {
			if (answer.isDone()) {
				return;
			}
			try {
				relay(wait.get(), answer);
			}
			catch (RuntimeException ex) {
				answer.completeExceptionally(ex);
			}
		});
		return answer;
	}

	/**
	 * The answer of {@code waiting}, unwrapped; cancelling the answer cancels the wait,
	 * and a lock the answer no longer takes is released.
	 */
	private <L extends Lease> CompletableFuture<Optional<L>> relayed(CompletableFuture<Optional<L>> waiting) {
		CompletableFuture<Optional<L>> answer = new CompletableFuture<>();
		relay(waiting, answer);
		return answer;
	}

	private <L extends Lease> void relay(CompletableFuture<Optional<L>> waiting,
			CompletableFuture<Optional<L>> answer) {
		waiting.whenComplete((lease, failure) -> {
			if (failure != null) {
				answer.completeExceptionally(Observations.unwrapped(failure));
			}
			else if (!answer.complete(lease) && lease.isPresent()) {
				// Cancelled as the lock was taken: nobody will release it but us.
				releaseQuietly(lease.get());
			}
		});
		answer.whenComplete((lease, failure) -> {
			if (failure instanceof CancellationException) {
				waiting.cancel(false);
			}
		});
	}

	/**
	 * Runs {@code action} once {@code acquired} has a lease, and completes as the stage
	 * it returns does, as {@link dev.distlock.AsyncLockTemplate#execute} describes,
	 * except that the release runs on a worker: the lease is released once, when that
	 * stage completes, when the returned stage is cancelled, or, with
	 * {@code on-lease-lost: interrupt}, when the lease is found lost (the action's stage
	 * is cancelled then, and the returned one fails with the loss).
	 * @param acquired the acquisition, from {@link #acquire} or {@link #acquireAll}
	 * @param notAcquired what the returned stage fails with when the wait time ran out,
	 * or null to complete it with {@code skipped} without calling the action
	 * @param skipped the result of a call skipped for want of the lock
	 */
	public <T> CompletableFuture<T> execute(CompletableFuture<? extends Optional<? extends Lease>> acquired,
			@Nullable Supplier<RuntimeException> notAcquired, @Nullable T skipped,
			Supplier<? extends CompletionStage<T>> action) {
		CompletableFuture<T> result = new CompletableFuture<>();
		acquired.whenComplete((found, failure) -> {
			if (failure != null) {
				result.completeExceptionally(Observations.unwrapped(failure));
			}
			else if (found.isEmpty()) {
				if (notAcquired != null) {
					result.completeExceptionally(notAcquired.get());
				}
				else {
					result.complete(skipped);
				}
			}
			else if (result.isDone()) {
				// Cancelled as the lock was taken: the action never starts.
				releaseQuietly(found.get());
			}
			else {
				new AsyncHold<>(this, found.get(), result).start(action);
			}
		});
		result.whenComplete((value, failure) -> {
			if (failure instanceof CancellationException) {
				acquired.cancel(false);
			}
		});
		return result;
	}

	/**
	 * Releases {@code lease} without a store call on the calling thread: a re-entered
	 * lease at once, one the store can release asynchronously through that call, any
	 * other on a worker. The answer may complete on a thread of the store's client, so
	 * what depends on it must not block.
	 * @return completes once released; fails with what {@link Lease#release()} throws
	 * ({@link dev.distlock.LeaseLostException} for a lease lost while held)
	 */
	public CompletableFuture<Void> release(Lease lease) {
		if (lease instanceof ManagedLease managed) {
			return LeaseEnd.releaseAsync(managed, this.template::offload);
		}
		if (lease instanceof NestedLease) {
			try {
				lease.release();
				return CompletableFuture.completedFuture(null);
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}
		return LeaseEnd.onWorker(this.template::offload, lease::release);
	}

	/**
	 * Runs {@code step} on one of the template's workers: for what follows a release that
	 * may have completed on a thread of the store's client.
	 */
	void offload(Runnable step) {
		this.template.offload(step);
	}

	/** Releases {@code lease} on a worker, logging a failure. */
	public void releaseQuietly(Lease lease) {
		release(lease).whenComplete((done, failure) -> {
			if (failure instanceof LeaseLostException) {
				logger.debug("Lease lost while held by a caller that gave up", failure);
			}
			else if (failure != null) {
				logger.warn("Could not release lock '" + lease.key() + "' taken for a caller that gave up", failure);
			}
		});
	}

	/**
	 * Runs {@code callback} once {@code lease} (or, for a multi-key lease, any of its
	 * keys) is found lost, on the thread that finds it; at once if it already is. The
	 * callback must not block.
	 * @return removes the callback
	 */
	public Runnable whenLost(Lease lease, Runnable callback) {
		return LeasedCall.whenLost(lease, callback);
	}

	/** What the lock of {@code lease} does when the lease is lost while held. */
	public OnLeaseLost onLeaseLost(Lease lease) {
		return LeasedCall.onLeaseLost(lease);
	}

	/**
	 * What an acquisition of {@code key} with {@code options} fails with at its wait
	 * time.
	 */
	public RuntimeException notAcquired(String key, LockOptions options) {
		return this.template.notAcquired(key, options);
	}

	/** What an acquisition of all {@code keys} fails with at its wait time. */
	public RuntimeException notAllAcquired(Collection<String> keys, LockOptions options) {
		return Holdings.notAllAcquired(MultiKeyAcquirer.sortedKeys(keys), this.template.settings(options));
	}

}
