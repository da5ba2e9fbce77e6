package dev.distlock.coroutines

import dev.distlock.AsyncLockTemplate
import dev.distlock.LeaseLostException
import dev.distlock.LockAcquisitionException
import dev.distlock.Lease
import dev.distlock.LockOptions
import dev.distlock.reactive.ReactiveLockTemplate
import java.util.concurrent.CompletionStage
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.emitAll
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn

/**
 * This flow, collected while holding the distributed lock on [key].
 *
 * Each collection takes the lock when it starts (suspending, without holding a thread,
 * up to the wait time, else failing with [LockAcquisitionException]) and releases it once,
 * when the collection ends: this flow completed or failed, or the collector stopped early
 * (`first()`, `take(n)`) or was cancelled. A flow that is never collected takes no lock.
 * The upstream runs in the lock's scope ([currentLease] gives the lease, a nested
 * [withLock] on the key re-enters it); the collector's own code runs while the lock is
 * held, in its own context. A lease lost during the collection fails it with
 * [LeaseLostException] once the upstream ends, as [withLock] does.
 */
public fun <T> Flow<T>.locked(
	template: AsyncLockTemplate,
	key: String,
	options: LockOptions = LockOptions.defaults(),
): Flow<T> {
	return lockedBy(this, template::release) { context ->
		reentering(context.leases()) { template.acquire(key, options) }
	}
}

/**
 * This flow, collected while holding the distributed lock on [key] taken through the
 * reactive template: as [locked] over the asynchronous template.
 */
public fun <T> Flow<T>.locked(
	template: ReactiveLockTemplate,
	key: String,
	options: LockOptions = LockOptions.defaults(),
): Flow<T> = lockedBy(this, template.releasing()) { context -> template.acquire(key, options).inContextOf(context) }

private fun <T> lockedBy(
	upstream: Flow<T>,
	release: Release,
	acquire: (CoroutineContext) -> CompletionStage<out Lease?>,
): Flow<T> =
	flow {
		// flowOn with no dispatcher of its own runs the upstream in this very coroutine,
		// with the lease's scope added: its items reach the collector with no buffer
		// between, so none is still unprocessed when the lock is released.
		holding(acquire, release) { scope -> emitAll(upstream.flowOn(scope)) }
	}
