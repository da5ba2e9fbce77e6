package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.support.LeasedCall
import java.util.concurrent.CompletionStage
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.apache.commons.logging.LogFactory

private val logger = LogFactory.getLog("dev.distlock.coroutines.Holding")

/**
 * Waits for the lease that [acquire] starts taking for the calling coroutine, runs [body]
 * with the element that adds it to the coroutine's scope, and releases the lease once,
 * when the body (and every coroutine it started) has ended, however it ended (a cancelled
 * caller included).
 */
internal suspend fun <T> holding(
	acquire: (CoroutineContext) -> CompletionStage<out Lease?>,
	body: suspend (CoroutineContext.Element) -> T,
): T {
	val context = currentCoroutineContext()
	val lease = awaitLease(acquire(context))
	val result = try {
		body(context.scopeOf(lease))
	}
	catch (failure: Throwable) {
		release(lease, failure)
		throw failure
	}
	release(lease, null)
	return result
}

/**
 * Releases [lease] as the blocking template does after its body ([LeasedCall]): a loss is
 * thrown, or added as suppressed to [failure], unless the lock's on-lease-lost is LOG; a
 * store that cannot be reached leaves the lock to expire. It runs even for a cancelled
 * caller, and off the caller's dispatcher, since a release is a store call.
 */
private suspend fun release(lease: Lease, failure: Throwable?) {
	withContext(NonCancellable + Dispatchers.IO) {
		if (failure == null) {
			LeasedCall.call<Unit, RuntimeException>(lease) {}
		}
		else {
			try {
				LeasedCall.call<Unit, Throwable>(lease) { throw failure }
			}
			catch (same: Throwable) {
				// The block's own failure, now carrying a loss or release failure as
				// suppressed: the caller rethrows it.
			}
		}
	}
}

/** Releases a lease that nobody will use: taken for a caller that was cancelled. */
internal fun releaseQuietly(lease: Lease) {
	try {
		lease.release()
	}
	catch (ex: RuntimeException) {
		logger.warn("Could not release lock '${lease.key()}' taken for a coroutine that was cancelled", ex)
	}
}
