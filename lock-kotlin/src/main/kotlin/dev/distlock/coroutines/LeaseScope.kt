package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LockContext
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.CoroutineContext
import kotlinx.coroutines.currentCoroutineContext

/**
 * The leases whose scope a coroutine runs in, innermost first: the body of
 * [withLock], [withLocks] or a locked flow. It is an element of the coroutine context, so
 * it follows the coroutine across suspensions and threads and is inherited by the
 * coroutines it starts, and never by a thread: two coroutines that share a thread never
 * share a scope.
 */
internal class LeaseScope(val leases: List<Lease>) : AbstractCoroutineContextElement(LeaseScope) {

	companion object Key : CoroutineContext.Key<LeaseScope>

	/** This scope with [lease] as the innermost lease. */
	fun with(lease: Lease): LeaseScope = LeaseScope(listOf(lease) + leases)

	/**
	 * Calls [call] with the leases of this scope open in [LockContext] on the current
	 * thread, so that an acquisition it starts re-enters them by the core's own rules
	 * (read and write locks, permits). The scopes are closed before this returns, on the
	 * same thread: [call] must not suspend.
	 */
	inline fun <R> reentering(call: () -> R): R {
		val opened = leases.asReversed().map { LockContext.open(it) }
		try {
			return call()
		}
		finally {
			opened.asReversed().forEach { it.close() }
		}
	}

	override fun toString(): String = "LeaseScope(${leases.joinToString { it.key() }})"

}

/**
 * The innermost lease whose scope the calling coroutine runs in: inside [withLock],
 * [withLocks] or a locked flow, in the coroutines they start, and in a coroutine whose
 * Reactor context carries a lease (an annotated `suspend` function, a Reactor pipeline
 * under the reactive template). Null outside any scope. Use it to pass the
 * [fencing token][Lease.fencingToken] on to the store you write to.
 */
public suspend fun currentLease(): Lease? = heldLeases().firstOrNull()

/**
 * The innermost lease on [key] whose scope the calling coroutine runs in, or null.
 */
public suspend fun currentLease(key: String): Lease? = heldLeases().firstOrNull { it.key() == key }

/**
 * The leases whose scopes the calling coroutine runs in, innermost first; empty outside
 * any scope.
 */
public suspend fun heldLeases(): List<Lease> = currentCoroutineContext()[LeaseScope]?.leases ?: emptyList()
