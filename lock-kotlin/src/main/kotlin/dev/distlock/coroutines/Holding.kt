package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LeaseLostException
import dev.distlock.LockBackendException
import dev.distlock.OnLeaseLost
import dev.distlock.support.LeasedCall
import java.util.concurrent.CompletionStage
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.future.await
import kotlinx.coroutines.isActive
import kotlinx.coroutines.job
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext
import org.apache.commons.logging.LogFactory

private val logger = LogFactory.getLog("dev.distlock.coroutines.Holding")

/**
 * How the extensions give a lease back: the template's own release, which does not block
 * the caller (it goes to the store without waiting where the store can, and runs on one
 * of the template's shared threads where it cannot).
 */
internal typealias Release = (Lease) -> CompletionStage<*>

/**
 * Waits for the lease that [acquire] starts taking for the calling coroutine, runs [body]
 * with the element that adds it to the coroutine's scope, and gives the lease back through
 * [release] once, when the body (and every coroutine it started) has ended, however it
 * ended (a cancelled caller included).
 */
internal suspend fun <T> holding(
	acquire: (CoroutineContext) -> CompletionStage<out Lease?>,
	release: Release,
	body: suspend (CoroutineContext.Element) -> T,
): T {
	val context = currentCoroutineContext()
	val lease = awaitLease(acquire(context), release)
	val cut = AtomicBoolean()
	val result = try {
		cutShortOnLoss(lease, cut) { body(context.scopeOf(lease)) }
	}
	catch (failure: Throwable) {
		if (failure is CancellationException && cut.get() && context.isActive) {
			// Cancelled by the loss, not by the caller: the release reports the loss.
			end(lease, release, null)
			throw LeaseLostException(lease.key(), "Lease on '${lease.key()}' was lost while held")
		}
		end(lease, release, failure)
		throw failure
	}
	end(lease, release, null)
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
 * Releases [lease] and reports its end as the blocking template does after its body
 * ([LeasedCall]): a loss is thrown, or added as suppressed to [failure], unless the lock's
 * on-lease-lost is LOG; a store that cannot be reached leaves the lock to expire. It runs
 * even for a cancelled caller, and suspends instead of blocking while the store answers.
 */
private suspend fun end(lease: Lease, release: Release, failure: Throwable?) {
	val problem = withContext(NonCancellable) {
		try {
			release(lease).await()
			null
		}
		catch (ex: Throwable) {
			ex
		}
	} ?: return
	if (problem is LeaseLostException && LeasedCall.onLeaseLost(lease) == OnLeaseLost.LOG) {
		logger.debug("Lease lost while held; on-lease-lost is LOG, so the call completes", problem)
	}
	else if (failure != null) {
		failure.addSuppressed(problem)
	}
	else if (problem is LockBackendException) {
		// The work is done and renewal has stopped: failing a completed call would tell the
		// caller it did not happen.
		logger.warn("Could not release lock '${lease.key()}'; it expires when its lease runs out", problem)
	}
	else {
		throw problem
	}
}

/** Releases a lease that nobody will use: taken for a caller that was cancelled. */
internal fun releaseQuietly(lease: Lease, release: Release) {
	release(lease).whenComplete { _, failure ->
		if (failure is LeaseLostException) {
			logger.debug("Lease lost while held by a coroutine that was cancelled", failure)
		}
		else if (failure != null) {
			logger.warn("Could not release lock '${lease.key()}' taken for a coroutine that was cancelled", failure)
		}
	}
}
