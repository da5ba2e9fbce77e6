package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LockOptions
import dev.distlock.reactive.ReactiveLockTemplate
import java.util.concurrent.CompletionStage
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.withContext
import reactor.core.publisher.Mono

/**
 * Runs [block] holding the distributed lock on [key], taken through the reactive
 * template, with every guarantee of [withLock] over the asynchronous template; in
 * addition no store call, not even the first attempt, is made on the caller's thread.
 * Re-entry follows the coroutine's Reactor context, so a lock held by an enclosing
 * Reactor pipeline or annotated method is re-entered too.
 */
public suspend fun <T> ReactiveLockTemplate.withLock(
	key: String,
	options: LockOptions = LockOptions.defaults(),
	block: suspend CoroutineScope.() -> T,
): T = holding({ context -> acquire(key, options).inContextOf(context) }, releasing()) { scope ->
	withContext(scope) { block() }
}

/**
 * Runs [block] holding the locks on every one of [keys], all or none, as
 * [ReactiveLockTemplate.acquireAll] takes them: no key is held while another is waited
 * for. [currentLease] of each key gives its part, with its own fencing token.
 */
public suspend fun <T> ReactiveLockTemplate.withLocks(
	keys: Collection<String>,
	options: LockOptions = LockOptions.defaults(),
	block: suspend CoroutineScope.() -> T,
): T {
	require(keys.isNotEmpty()) { "withLocks needs at least one key; the keys given were empty" }
	return holding({ context -> acquireAll(keys, options).inContextOf(context) }, releasing()) { scope ->
		withContext(scope) { block() }
	}
}

/**
 * Subscribes with the coroutine's Reactor context, so the acquisition re-enters the
 * coroutine's leases; cancelling the returned stage cancels the subscription.
 */
internal fun Mono<out Lease>.inContextOf(context: CoroutineContext): CompletionStage<out Lease?> {
	val reactor = context[ReactorContext]?.context
	return (if (reactor == null) this else contextWrite(reactor)).toFuture()
}

/** This template's release, which never blocks the caller, as a stage. */
internal fun ReactiveLockTemplate.releasing(): Release = { lease -> release(lease).toFuture() }
