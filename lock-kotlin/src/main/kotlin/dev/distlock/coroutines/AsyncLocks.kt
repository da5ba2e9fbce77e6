package dev.distlock.coroutines

import dev.distlock.AsyncLockTemplate
import dev.distlock.Lease
import dev.distlock.LeaseLostException
import dev.distlock.LockAcquisitionException
import dev.distlock.LockBackendException
import dev.distlock.LockOptions
import java.util.concurrent.CompletionException
import java.util.concurrent.CompletionStage
import java.util.concurrent.ExecutionException
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.withContext

/**
 * Runs [block] holding the distributed lock on [key], and returns what it returns.
 *
 * - The coroutine suspends while it waits for the lock: no thread is parked or blocked,
 *   so thousands of coroutines may wait on one thread. The wait ends as configured
 *   (`wait-time`, or [LockOptions.Builder.waitTime]) with [LockAcquisitionException]
 *   naming the key.
 * - [block] starts only once the lock is held, and never if it is not acquired.
 * - The lock is held, and renewed as configured, until [block] returns or throws,
 *   including every coroutine it starts (it runs in a scope of its own, as with
 *   [kotlinx.coroutines.coroutineScope]); then it is released, exactly once, before this
 *   call returns. A cancelled caller releases too: cancelling while waiting gives the wait
 *   up (a lock taken meanwhile is released at once), cancelling while holding cancels
 *   [block] and releases once it has finished.
 * - A lease lost while held is never silent: with `on-lease-lost` `fail-on-exit` (the
 *   default), this call throws [LeaseLostException] once [block] ends, or adds it as
 *   suppressed to the exception [block] threw; with `interrupt`, [block] is also cancelled
 *   as soon as the loss is found, and this call throws [LeaseLostException] once it has
 *   finished; with `log` only the warning and the event remain.
 * - Re-entry follows the coroutine, never a thread: inside [block], and in the coroutines
 *   it starts, [currentLease] is the lease, and a nested `withLock` on the same key joins
 *   it instead of waiting (the lock stays held until the outermost one returns). A
 *   coroutine outside [block] that happens to run on the same thread is not inside.
 * - [block]'s own exception reaches the caller unchanged; the store's failure while
 *   acquiring is [LockBackendException].
 *
 * The release suspends the caller instead of blocking its thread: it is the template's
 * own [release][AsyncLockTemplate.release], so the caller's dispatcher (a single UI or
 * event-loop thread, say) never blocks on it, and no thread waits for the store's answer
 * where the store answers asynchronously (Redis).
 */
public suspend fun <T> AsyncLockTemplate.withLock(
	key: String,
	options: LockOptions = LockOptions.defaults(),
	block: suspend CoroutineScope.() -> T,
): T {
	return holding({ context -> reentering(context.leases()) { acquire(key, options) } }, this::release) { scope ->
		withContext(scope) { block() }
	}
}

/**
 * Runs [block] holding the locks on every one of [keys], all or none, as
 * [AsyncLockTemplate.acquireAll] takes them: no key is held while another is waited for,
 * and none is left held if they are not all acquired within the wait time (which fails
 * with [LockAcquisitionException] naming the keys). Otherwise as [withLock]:
 * [currentLease] of each key gives its part, with its own fencing token, and all are
 * released once [block] ends.
 */
public suspend fun <T> AsyncLockTemplate.withLocks(
	keys: Collection<String>,
	options: LockOptions = LockOptions.defaults(),
	block: suspend CoroutineScope.() -> T,
): T {
	require(keys.isNotEmpty()) { "withLocks needs at least one key; the keys given were empty" }
	return holding({ context -> reentering(context.leases()) { acquireAll(keys, options) } }, this::release) { scope ->
		withContext(scope) { block() }
	}
}

/**
 * Suspends until [stage] completes with a lease. Cancelling the caller cancels the stage
 * (the template gives the wait up and releases a lock taken meanwhile), and a lease that
 * arrives for a caller cancelled in the meantime is released here: no lease is ever left
 * without an owner.
 */
internal suspend fun awaitLease(stage: CompletionStage<out Lease?>, release: Release): Lease {
	val future = stage.toCompletableFuture()
	return suspendCancellableCoroutine { continuation ->
		future.whenComplete { lease, failure ->
			if (failure != null) {
				continuation.resumeWithException(unwrapped(failure))
			}
			else if (lease == null) {
				continuation.resumeWithException(IllegalStateException("The lock template completed without a lease"))
			}
			else {
				continuation.resume(lease) { _, unclaimed, _ -> releaseQuietly(unclaimed, release) }
			}
		}
		continuation.invokeOnCancellation { future.cancel(false) }
	}
}

private fun unwrapped(failure: Throwable): Throwable =
	if ((failure is CompletionException || failure is ExecutionException) && failure.cause != null) failure.cause!!
	else failure
