/*
 * The code of docs/kotlin.md, compiled and never run; the page's imports come last, as it
 * shows them, right before its code.
 */
package dev.distlock.docs

import dev.distlock.coroutines.locked
import java.time.Duration
import kotlinx.coroutines.flow.Flow
import org.springframework.stereotype.Service
import dev.distlock.AsyncLockTemplate
import dev.distlock.LockOptions
import dev.distlock.coroutines.currentLease
import dev.distlock.coroutines.withLock

@Service
class StockService(private val locks: AsyncLockTemplate, private val stock: StockRepository) {

    suspend fun reserve(sku: String, quantity: Int): Reservation =
        locks.withLock("stock:$sku", LockOptions.builder().waitTime(Duration.ofSeconds(2)).build()) {
            val token = currentLease()!!.fencingToken()
            stock.reserve(sku, quantity, token)      // suspend calls are fine while holding
        }
}

class OrderEvents(private val locks: AsyncLockTemplate, private val eventStore: EventStore) {

    fun events(orderId: String): Flow<Event> =
        eventStore.stream(orderId).locked(locks, "order:$orderId")

}

interface StockRepository {

    suspend fun reserve(sku: String, quantity: Int, token: Long): Reservation

}

class Reservation

class Event

interface EventStore {

    fun stream(orderId: String): Flow<Event>

}
