package dev.distlock;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * Programmatic distributed locking for asynchronous code: the same locks, options and
 * guarantees as {@link LockTemplate}, but no thread is parked while a caller waits for a
 * lock. The wait runs as steps on a few shared threads of the template, timed by its
 * scheduler; an uncontended acquisition on a store that answers at once completes before
 * the call returns.
 *
 * <p>
 * Every stage returned here is a {@link java.util.concurrent.CompletableFuture}:
 * {@code toCompletableFuture()} returns the stage itself, so cancelling it is how a
 * caller gives up. Cancelling a wait withdraws it (a place kept in the store's queue is
 * given up), and a lock taken meanwhile is released; no lock is left held.
 *
 * <p>
 * A lease belongs to no thread. Re-entry follows {@link LockContext} scopes, as with the
 * blocking template: an acquisition from inside a scope of a lease on the same key
 * re-enters it.
 */
public interface AsyncLockTemplate {

	/**
	 * Acquires the lock on {@code key}, waiting up to the wait time without holding a
	 * thread. The caller must release the lease ({@link #release}).
	 * @return completes with the lease; fails with {@link LockAcquisitionException}
	 * (naming the key) if the lock was not acquired within the wait time, or with
	 * {@link LockBackendException} if the store failed or could not be reached
	 */
	CompletionStage<Lease> acquire(String key, LockOptions options);

	/**
	 * As {@link #acquire}, completing empty if the lock was not acquired within the wait
	 * time.
	 */
	CompletionStage<Optional<Lease>> tryAcquire(String key, LockOptions options);

	/**
	 * Acquires the locks on all of {@code keys}, all or none, waiting up to the wait time
	 * without holding a thread, as {@link LockTemplate#acquireAll} does: deduplicated,
	 * taken in sorted order, and no key is left held after a failure, a timeout or a
	 * cancellation. The caller must release the lease ({@link #release}).
	 * @return completes with the lease of all keys; fails with
	 * {@link LockAcquisitionException} (naming the keys) if they were not all acquired
	 * within the wait time, or with {@link LockBackendException} if the store failed
	 * @throws UnsupportedOperationException if the store has no multi-key locks
	 */
	default CompletionStage<MultiLease> acquireAll(Collection<String> keys, LockOptions options) {
		throw new UnsupportedOperationException(getClass().getName() + " has no multi-key locks");
	}

	/**
	 * Releases {@code lease}, taken from this template, without blocking the caller, as
	 * {@link #execute} releases: the release goes to the store without waiting for its
	 * reply where the store can, and runs on one of the template's shared threads where
	 * it cannot. The answer may complete on a thread of the store's client, so what
	 * depends on it must not block. {@link Lease#release()} does the same, but blocks the
	 * calling thread until the store answers.
	 * <p>
	 * The default blocks: it releases on the calling thread. This library's template
	 * overrides it.
	 * @return completes once released; fails with {@link LeaseLostException} if the lease
	 * was lost while held, or with {@link LockBackendException} if the store could not be
	 * reached (the lock then frees itself when its lease runs out)
	 */
	default CompletionStage<Void> release(Lease lease) {
		try {
			lease.release();
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Runs {@code action} holding the lock on {@code key}, and completes as the stage it
	 * returns does:
	 * <ul>
	 * <li>the lock is acquired without blocking the caller, and {@code action} is called
	 * only once it is held (never if it is not acquired), inside a {@link LockContext}
	 * scope of the lease, so that acquisitions it makes before it returns re-enter the
	 * lock;</li>
	 * <li>the lease is renewed as configured until the action's stage completes, normally
	 * or exceptionally, or until the returned stage is cancelled; then it is released,
	 * exactly once: before the returned stage completes, or right after it is
	 * cancelled;</li>
	 * <li>a lease lost while held is never silent: the returned stage fails with
	 * {@link LeaseLostException}, or, if the action failed, the loss is added to its
	 * failure as suppressed (with {@code on-lease-lost: log} only the warning and the
	 * event remain, as for {@link LockTemplate#execute}; with {@code on-lease-lost:
	 * interrupt} the loss cancels the action's stage and fails the returned one at
	 * once);</li>
	 * <li>cancelling the returned stage gives up the wait or, once the lock is held,
	 * releases it at once and cancels the action's stage; work the action still does
	 * after that runs without the lock.</li>
	 * </ul>
	 * The action is called on the thread that completes the acquisition (the calling
	 * thread, or one of the template's shared threads): it must return its stage without
	 * blocking, and hand blocking work to an executor of its own.
	 * @return completes with the action's result; fails with the action's failure, with
	 * {@link LockAcquisitionException} if the lock was not acquired within the wait time,
	 * or with {@link LeaseLostException}
	 */
	<T> CompletionStage<T> execute(String key, LockOptions options, Supplier<? extends CompletionStage<T>> action);

	/**
	 * As {@link #execute(String, LockOptions, Supplier)} with the configured defaults.
	 */
	default <T> CompletionStage<T> execute(String key, Supplier<? extends CompletionStage<T>> action) {
		return execute(key, LockOptions.defaults(), action);
	}

}
