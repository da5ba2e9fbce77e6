package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LeaseLostException
import dev.distlock.OnLeaseLost
import dev.distlock.support.LeasedCall
import java.util.concurrent.CompletionStage
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.isActive
import kotlinx.coroutines.job
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
	val cut = AtomicBoolean()
	val result = try {
		cutShortOnLoss(lease, cut) { body(context.scopeOf(lease)) }
	}
	catch (failure: Throwable) {
		if (failure is CancellationException && cut.get() && context.isActive) {
			// Cancelled by the loss, not by the caller: the release reports the loss.
			release(lease, null)
			throw LeaseLostException(lease.key(), "Lease on '${lease.key()}' was lost while held")
		}
		release(lease, failure)
		throw failure
	}
	release(lease, null)
	return result
}

/**
 * Runs [body]; with on-lease-lost INTERRUPT, in a scope of its own that is cancelled as
 * soon as the lease is found lost (setting [cut]), as the blocking template interrupts
 * its holder: the work stops at its next suspension instead of running on unguarded.
 */
private suspend fun <T> cutShortOnLoss(lease: Lease, cut: AtomicBoolean, body: suspend () -> T): T {
	if (LeasedCall.onLeaseLost(lease) != OnLeaseLost.INTERRUPT) {
		return body()
	}
	return coroutineScope {
		val job = coroutineContext.job
		val remove = LeasedCall.whenLost(lease) {
			cut.set(true)
			job.cancel(CancellationException("Lease on '${lease.key()}' was lost while held"))
		}
		try {
			body()
		}
		finally {
			remove.run()
		}
	}
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
