package dev.distlock.coroutines

import dev.distlock.LockOptions
import dev.distlock.inmemory.InMemoryLockProvider
import dev.distlock.reactive.DefaultReactiveLockTemplate
import dev.distlock.reactive.ReactiveLockContext
import dev.distlock.support.DefaultAsyncLockTemplate
import dev.distlock.support.DefaultLockTemplate
import dev.distlock.support.RenewalScheduler
import java.time.Duration
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactive.awaitSingle
import kotlinx.coroutines.reactor.mono
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * [withLock] over the reactive template, and the lease crossing between coroutines and
 * Reactor pipelines both ways (the coroutine's Reactor context carries it): a pipeline a
 * coroutine awaits re-enters its lock, and a coroutine a locked pipeline runs (as Spring
 * runs an annotated suspend function) sees the pipeline's lease and re-enters it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReactiveCoroutineLockTests {

	private val store = InMemoryLockProvider()

	private val scheduler = RenewalScheduler()

	private val defaults = LockOptions.builder()
		.waitTime(Duration.ofSeconds(50))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.build()

	private val template = DefaultLockTemplate(store, scheduler, defaults)

	private val reactive = DefaultReactiveLockTemplate(template)

	private val async = DefaultAsyncLockTemplate(template)

	/** Another JVM's template on the same store. */
	private val other = DefaultLockTemplate(store, scheduler, defaults)

	private val noWait = LockOptions.builder().waitTime(Duration.ZERO).build()

	private val key = "reactive-coroutine-${UUID.randomUUID()}"

	@AfterEach
	fun close() {
		template.close()
		other.close()
		scheduler.close()
	}

	private fun freeForOthers(name: String = key): Boolean =
		other.tryAcquire(name, noWait).map { it.release(); true }.orElse(false)

	@Test
	fun coroutinesHoldTheKeyOneAtATimeAndReleaseIt(): Unit = runBlocking {
		val holders = AtomicInteger()
		val overlaps = AtomicInteger()
		val tokens = CopyOnWriteArrayList<Long>()
		(1..100).map {
			async(Dispatchers.Default) {
				reactive.withLock(key) {
					if (holders.incrementAndGet() != 1) {
						overlaps.incrementAndGet()
					}
					tokens += currentLease()!!.fencingToken()
					yield()
					holders.decrementAndGet()
				}
			}
		}.awaitAll()
		assertThat(overlaps).hasValue(0)
		assertThat(tokens).hasSize(100).isSorted().doesNotHaveDuplicates()
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aCallerCancelledWhileWaitingLeavesNoLockHeld(): Unit = runBlocking {
		val held = other.acquire(key, LockOptions.defaults())
		val ran = AtomicInteger()
		val waiter = launch(Dispatchers.Default, CoroutineStart.UNDISPATCHED) {
			reactive.withLock(key) { ran.incrementAndGet() }
		}
		waiter.cancelAndJoin()
		held.release()
		assertThat(ran).hasValue(0)
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aPipelineAwaitedInsideTheBlockReentersTheCoroutinesLock(): Unit = runBlocking {
		async.withLock(key) {
			val outer = currentLease()!!.fencingToken()
			val seen = reactive.executeMono(key, noWait) { ReactiveLockContext.current().map { it.fencingToken() } }
				.awaitSingle()
			assertThat(seen).isEqualTo(outer)
			// The pipeline gave back its level only.
			assertThat(freeForOthers()).isFalse()
		}
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aCoroutineRunByALockedPipelineSeesItsLeaseAndReentersIt(): Unit = runBlocking {
		// As Spring runs an annotated suspend function: a mono { } subscribed with the lease in its context.
		val tokens = reactive.executeMono(key, LockOptions.defaults()) {
			mono {
				val outer = currentLease(key)!!.fencingToken()
				val inner = async.withLock(key, noWait) { currentLease()!!.fencingToken() }
				val innerReactive = reactive.withLock(key, noWait) { currentLease()!!.fencingToken() }
				listOf(outer, inner, innerReactive)
			}
		}.awaitSingle()
		assertThat(tokens).hasSize(3).containsOnly(tokens[0])
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun withLocksHoldsEveryKeyWithItsOwnToken(): Unit = runBlocking {
		val a = "$key-a"
		val b = "$key-b"
		reactive.withLocks(listOf(b, a)) {
			assertThat(currentLease(a)).isNotNull()
			assertThat(currentLease(b)).isNotNull()
			assertThat(freeForOthers(a)).isFalse()
			assertThat(freeForOthers(b)).isFalse()
		}
		assertThat(freeForOthers(a)).isTrue()
		assertThat(freeForOthers(b)).isTrue()
	}

}
