package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LockContext
import dev.distlock.reactive.ReactiveLockContext
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.currentCoroutineContext
import kotlinx.coroutines.reactor.ReactorContext
import reactor.core.publisher.Mono
import reactor.util.context.Context

/*
 * A coroutine's leases live in its ReactorContext element, under the key the reactive
 * template uses (ReactiveLockContext.LEASES), innermost first. It is an element of the
 * coroutine context, so it follows the coroutine across suspensions and threads and is
 * inherited by the coroutines it starts, and never by a thread. Being the Reactor
 * context, it also reaches every Reactor pipeline the coroutine awaits, and a coroutine
 * that Spring runs for an annotated suspend function gets the annotation's lease in it.
 */

/** The leases of this coroutine context, innermost first. */
internal fun CoroutineContext.leases(): List<Lease> =
	this[ReactorContext]?.context?.let { ReactiveLockContext.leases(it) } ?: emptyList()

/** The element that makes [lease] the innermost lease of this coroutine context. */
internal fun CoroutineContext.scopeOf(lease: Lease): ReactorContext =
	ReactorContext(ReactiveLockContext.with(this[ReactorContext]?.context ?: Context.empty(), lease))

/**
 * Calls [call] with [leases] open in [LockContext] on the current thread, so that a
 * blocking-style acquisition it starts (the asynchronous template's) re-enters them by
 * the core's own rules (read and write locks, permits). The scopes are closed before this
 * returns, on the same thread: [call] must not suspend.
 */
internal inline fun <R> reentering(leases: List<Lease>, call: () -> R): R {
	val opened = leases.asReversed().map { LockContext.open(it) }
	try {
		return call()
	}
	finally {
		opened.asReversed().forEach { it.close() }
	}
}

/**
 * The innermost lease whose scope the calling coroutine runs in: inside [withLock],
 * [withLocks] or a [locked] flow, in the coroutines they start, in an annotated `suspend`
 * function, and in a coroutine started for a Reactor pipeline that holds a lock. Null
 * outside any. Use it to pass the [fencing token][Lease.fencingToken] on to what the
 * locked code writes to.
 */
public suspend fun currentLease(): Lease? = ReactiveLockContext.current().now(currentCoroutineContext())

/**
 * The innermost lease on [key] whose scope the calling coroutine runs in (for a lock on
 * several keys, that key's part, with its own fencing token), or null.
 */
public suspend fun currentLease(key: String): Lease? =
	ReactiveLockContext.current(key).now(currentCoroutineContext())

/**
 * The leases whose scopes the calling coroutine runs in, innermost first; empty outside
 * any.
 */
public suspend fun heldLeases(): List<Lease> = currentCoroutineContext().leases()

/**
 * The lease this lookup finds in the Reactor context of [context]. The lookup answers as
 * it is subscribed, so this never suspends: a cancelled coroutine may still ask for its
 * lease in its clean-up.
 */
private fun Mono<Lease>.now(context: CoroutineContext): Lease? {
	var found: Lease? = null
	contextWrite(context[ReactorContext]?.context ?: Context.empty()).subscribe { found = it }
	return found
}
