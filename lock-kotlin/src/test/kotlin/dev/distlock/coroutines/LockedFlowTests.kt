package dev.distlock.coroutines

import dev.distlock.LockOptions
import dev.distlock.inmemory.InMemoryLockProvider
import dev.distlock.support.DefaultAsyncLockTemplate
import dev.distlock.support.DefaultLockTemplate
import dev.distlock.support.RenewalScheduler
import java.time.Duration
import java.util.UUID
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * [locked] flows on the in-memory store: a collection holds the lock from its start to
 * its end (the collector's processing included), collections exclude each other, a flow
 * never collected takes no lock, and one stopped early releases.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LockedFlowTests {

	private val store = InMemoryLockProvider()

	private val scheduler = RenewalScheduler()

	private val defaults = LockOptions.builder()
		.waitTime(Duration.ofSeconds(50))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.build()

	private val template = DefaultLockTemplate(store, scheduler, defaults)

	private val locks = DefaultAsyncLockTemplate(template)

	/** Another JVM's template on the same store. */
	private val other = DefaultLockTemplate(store, scheduler, defaults)

	private val key = "flow-${UUID.randomUUID()}"

	@AfterEach
	fun close() {
		template.close()
		other.close()
		scheduler.close()
	}

	private fun freeForOthers(): Boolean =
		other.tryAcquire(key, LockOptions.builder().waitTime(Duration.ZERO).build()).map { it.release(); true }.orElse(false)

	@Test
	fun theLockIsHeldFromTheFirstItemToTheLastProcessedOne(): Unit = runBlocking {
		val seenByCollector = mutableListOf<Boolean>()
		val tokens = flow {
			emit(currentLease()!!.fencingToken())
			emit(currentLease(key)!!.fencingToken())
		}.locked(locks, key).map {
			seenByCollector += !freeForOthers()
			it
		}.toList()
		assertThat(tokens).hasSize(2).containsOnly(tokens[0])
		assertThat(seenByCollector).containsExactly(true, true)
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aFlowNeverCollectedTakesNoLockAndOneStoppedEarlyReleases(): Unit = runBlocking {
		val numbers = flow {
			var n = 0
			while (true) {
				emit(n++)
			}
		}.locked(locks, key)
		assertThat(freeForOthers()).isTrue()
		assertThat(numbers.first()).isEqualTo(0)
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun concurrentCollectionsHoldTheKeyOneAtATime(): Unit = runBlocking {
		val holders = AtomicInteger()
		val overlaps = AtomicInteger()
		val items = flow {
			if (holders.incrementAndGet() != 1) {
				overlaps.incrementAndGet()
			}
			emit(1)
			yield()
			emit(2)
			holders.decrementAndGet()
		}.locked(locks, key)
		val collected = (1..50).map { async(Dispatchers.Default) { items.toList() } }.awaitAll()
		assertThat(collected).hasSize(50).containsOnly(listOf(1, 2))
		assertThat(overlaps).hasValue(0)
	}

}
