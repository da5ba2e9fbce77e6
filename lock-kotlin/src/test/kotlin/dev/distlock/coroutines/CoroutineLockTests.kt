package dev.distlock.coroutines

import dev.distlock.Lease
import dev.distlock.LeaseLostException
import dev.distlock.LockAcquisitionException
import dev.distlock.LockOptions
import dev.distlock.OnLeaseLost
import dev.distlock.inmemory.InMemoryLockProvider
import dev.distlock.support.DefaultAsyncLockTemplate
import dev.distlock.support.DefaultLockTemplate
import dev.distlock.support.RenewalScheduler
import java.lang.management.ManagementFactory
import java.time.Duration
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.ExperimentalCoroutinesApi
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.newSingleThreadContext
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.yield
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatExceptionOfType
import org.assertj.core.api.Assertions.catchThrowable
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout

/**
 * [withLock] and [withLocks] over the asynchronous template on the in-memory store: one
 * holder at a time, the block runs only while held, the lock is released once the block
 * has ended (also for a cancelled caller, while waiting or holding), re-entry follows the
 * coroutine and its children but not its thread, a loss is surfaced, and waiting coroutines
 * hold no thread.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@OptIn(ExperimentalCoroutinesApi::class, kotlinx.coroutines.DelicateCoroutinesApi::class)
class CoroutineLockTests {

	private val store = InMemoryLockProvider()

	private val closeables = mutableListOf<AutoCloseable>()

	private val template = template()

	private val locks = DefaultAsyncLockTemplate(template)

	/** Another JVM's template on the same store. */
	private val other = template()

	private val key = "coroutine-${UUID.randomUUID()}"

	private fun template(leaseTime: Duration = Duration.ofSeconds(30)): DefaultLockTemplate {
		val scheduler = RenewalScheduler()
		val created = DefaultLockTemplate(store, scheduler, LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(leaseTime)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(100))
			.build())
		closeables += created
		closeables += scheduler
		return created
	}

	@AfterEach
	fun close() {
		closeables.forEach { it.close() }
	}

	private val noWait = LockOptions.builder().waitTime(Duration.ZERO).build()

	private val longWait = LockOptions.builder().waitTime(Duration.ofSeconds(50)).build()

	/** Whether another JVM could take the key right now (and then gives it back). */
	private fun freeForOthers(): Boolean = other.tryAcquire(key, noWait).map { it.release(); true }.orElse(false)

	/**
	 * The exception as thrown, before kotlinx.coroutines' stack-trace recovery (on when
	 * assertions are, as in tests) copied it at a suspension point.
	 */
	private fun recovered(thrown: Throwable): Throwable =
		if (thrown.cause?.javaClass == thrown.javaClass) thrown.cause!! else thrown

	@Test
	fun manyCoroutinesOnOneKeyHoldItOneAtATime(): Unit = runBlocking {
		val holders = AtomicInteger()
		val overlaps = AtomicInteger()
		val tokens = CopyOnWriteArrayList<Long>()
		(1..200).map {
			async(Dispatchers.Default) {
				locks.withLock(key, longWait) {
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
		assertThat(tokens).hasSize(200).isSorted().doesNotHaveDuplicates()
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun theBlockRunsOnlyOnceTheLockIsHeldAndItStaysHeldUntilTheBlockReturns(): Unit = runBlocking {
		val held = other.acquire(key, LockOptions.defaults())
		val started = CompletableDeferred<Lease>()
		val finish = CompletableDeferred<Unit>()
		// Undispatched: by the time async returns, the caller has asked and is waiting.
		val call = async(Dispatchers.Default, CoroutineStart.UNDISPATCHED) {
			locks.withLock(key, longWait) {
				started.complete(currentLease()!!)
				finish.await()
				"done"
			}
		}
		assertThat(started.isCompleted).isFalse()
		val heldToken = held.fencingToken()
		held.release()
		val lease = started.await()
		assertThat(lease.fencingToken()).isGreaterThan(heldToken)
		// Suspended inside the block: the lock is still this caller's.
		assertThat(lease.isHeld).isTrue()
		assertThat(freeForOthers()).isFalse()
		finish.complete(Unit)
		assertThat(call.await()).isEqualTo("done")
		assertThat(lease.isHeld).isFalse()
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun theBlocksOwnExceptionReachesTheCallerAndTheLockIsReleased(): Unit = runBlocking {
		val failure = IllegalStateException("the block's own")
		assertThatExceptionOfType(IllegalStateException::class.java).isThrownBy {
			runBlocking { locks.withLock(key) { throw failure } }
		}.satisfies({ assertThat(recovered(it)).isSameAs(failure) })
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aCallerCancelledWhileWaitingLeavesNoLockHeld(): Unit = runBlocking {
		val held = other.acquire(key, LockOptions.defaults())
		val ran = AtomicInteger()
		val waiter = launch(Dispatchers.Default, CoroutineStart.UNDISPATCHED) {
			locks.withLock(key, longWait) { ran.incrementAndGet() }
		}
		waiter.cancelAndJoin()
		held.release()
		assertThat(ran).hasValue(0)
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aCallerCancelledWhileHoldingReleasesOnceTheBlockHasFinished(): Unit = runBlocking {
		val started = CompletableDeferred<Unit>()
		val heldWhileFinishing = CompletableDeferred<Boolean>()
		val holder = launch(Dispatchers.Default) {
			locks.withLock(key) {
				try {
					started.complete(Unit)
					awaitCancellation()
				}
				finally {
					// Clean-up after cancellation still runs under the lock.
					heldWhileFinishing.complete(currentLease()!!.isHeld && !freeForOthers())
				}
			}
		}
		started.await()
		holder.cancelAndJoin()
		assertThat(heldWhileFinishing.await()).isTrue()
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun aNestedWithLockOnTheSameKeyReentersWithoutWaiting(): Unit = runBlocking {
		locks.withLock(key) {
			val outer = currentLease()!!
			val inner = locks.withLock(key, noWait) {
				assertThat(heldLeases()).hasSize(2)
				currentLease()!!.fencingToken()
			}
			assertThat(inner).isEqualTo(outer.fencingToken())
			// The inner release gave back one level only.
			assertThat(outer.isHeld).isTrue()
			assertThat(freeForOthers()).isFalse()
		}
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun coroutinesStartedInsideTheBlockSeeTheLeaseAndReenterIt(): Unit = runBlocking {
		val tokens = CopyOnWriteArrayList<Long>()
		val outer = locks.withLock(key) {
			val children = (1..5).map {
				launch(Dispatchers.Default) {
					tokens += currentLease(key)!!.fencingToken()
					locks.withLock(key, noWait) { tokens += currentLease()!!.fencingToken() }
				}
			}
			children.forEach { it.join() }
			currentLease()!!.fencingToken()
		}
		assertThat(tokens).hasSize(10).containsOnly(outer)
	}

	@Test
	fun anotherCoroutineOnTheSameThreadDoesNotReenter() { newSingleThreadContext("one-thread").use { thread ->
		runBlocking(thread) {
			val inside = CompletableDeferred<Unit>()
			val leave = CompletableDeferred<Unit>()
			val holder = launch {
				locks.withLock(key) {
					inside.complete(Unit)
					leave.await()
				}
			}
			inside.await()
			assertThat(currentLease()).isNull()
			// This coroutine runs on the holder's thread, but outside its block.
			val attempt = runCatching { locks.withLock(key, noWait) {} }
			assertThat(attempt.exceptionOrNull()).isInstanceOf(LockAcquisitionException::class.java)
			leave.complete(Unit)
			holder.join()
		}
	}}

	@Test
	fun aLeaseLostWhileHeldFailsTheCall() {
		assertThatExceptionOfType(LeaseLostException::class.java).isThrownBy {
			runBlocking {
				locks.withLock(key) {
					assertThat(store.expire(key)).isTrue()
				}
			}
		}.withMessageContaining(key)
	}

	@Test
	fun aLeaseLostWhileTheBlockFailsIsAddedToItsFailure() {
		val failure = IllegalStateException("the block's own")
		val thrown = catchThrowable {
			runBlocking {
				locks.withLock(key) {
					store.expire(key)
					throw failure
				}
			}
		}
		assertThat(recovered(thrown)).isSameAs(failure)
		assertThat(thrown.suppressed).hasOnlyElementsOfType(LeaseLostException::class.java).hasSize(1)
	}

	@Test
	fun withOnLeaseLostInterruptTheBlockIsCancelledAtTheLoss() {
		val shortLeases = DefaultAsyncLockTemplate(template(Duration.ofMillis(600)))
		val interrupt = LockOptions.builder().onLeaseLost(OnLeaseLost.INTERRUPT).build()
		val running = CompletableDeferred<Unit>()
		val cancelled = CompletableDeferred<Throwable>()
		val thrown = catchThrowable {
			runBlocking {
				launch {
					running.await()
					assertThat(store.expire(key)).isTrue()
				}
				shortLeases.withLock(key, interrupt) {
					running.complete(Unit)
					try {
						awaitCancellation()
					}
					catch (cancel: kotlinx.coroutines.CancellationException) {
						cancelled.complete(cancel)
						throw cancel
					}
				}
			}
		}
		assertThat(thrown).isInstanceOf(LeaseLostException::class.java).hasMessageContaining(key)
		assertThat(cancelled.isCompleted).isTrue()
	}

	@Test
	fun aCallerCancelledWithOnLeaseLostInterruptIsCancelledNotFailed(): Unit = runBlocking {
		val interrupt = LockOptions.builder().onLeaseLost(OnLeaseLost.INTERRUPT).build()
		val holding = CompletableDeferred<Unit>()
		val caller = launch {
			locks.withLock(key, interrupt) {
				holding.complete(Unit)
				awaitCancellation()
			}
		}
		holding.await()
		caller.cancelAndJoin()
		assertThat(caller.isCancelled).isTrue()
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun withOnLeaseLostLogALostLeaseOnlyWarns(): Unit = runBlocking {
		val log = LockOptions.builder().onLeaseLost(OnLeaseLost.LOG).build()
		val result = locks.withLock(key, log) {
			store.expire(key)
			"completed"
		}
		assertThat(result).isEqualTo("completed")
	}

	@Test
	@Tag("slow")
	fun thousandsOfWaitingCoroutinesNeedOneThread() { newSingleThreadContext("waiters").use { thread ->
		val threads = ManagementFactory.getThreadMXBean()
		val held = other.acquire(key, LockOptions.defaults())
		val threadsBefore = threads.threadCount
		val ran = AtomicInteger()
		runBlocking(thread) {
			val waiters = (1..5000).map {
				launch(start = CoroutineStart.UNDISPATCHED) { locks.withLock(key, longWait) { ran.incrementAndGet() } }
			}
			// Every waiter has suspended, and the one thread is free to run more.
			assertThat(waiters).allMatch { it.isActive }
			assertThat(ran).hasValue(0)
			val threadsWhileWaiting = threads.threadCount
			println("Threads: $threadsBefore before, $threadsWhileWaiting while 5000 coroutines wait")
			assertThat(threadsWhileWaiting - threadsBefore).isLessThan(20)
			held.release()
			waiters.forEach { it.join() }
		}
		assertThat(ran).hasValue(5000)
		assertThat(freeForOthers()).isTrue()
	}}

	@Test
	fun withLocksHoldsEveryKeyAndTakesThemInOneOrder(): Unit = runBlocking {
		val a = "$key-a"
		val b = "$key-b"
		val holders = AtomicInteger()
		val overlaps = AtomicInteger()
		(1..50).map { i ->
			async(Dispatchers.Default) {
				locks.withLocks(if (i % 2 == 0) listOf(a, b) else listOf(b, a), longWait) {
					if (holders.incrementAndGet() != 1) {
						overlaps.incrementAndGet()
					}
					assertThat(currentLease(a)).isNotNull()
					assertThat(currentLease(b)).isNotNull()
					yield()
					holders.decrementAndGet()
				}
			}
		}.awaitAll()
		assertThat(overlaps).hasValue(0)
		assertThat(other.tryAcquire(a, noWait)).isPresent()
		assertThat(other.tryAcquire(b, noWait)).isPresent()
	}

	@Test
	fun withLocksHoldsNoKeyWhileItWaitsForAnother(): Unit = runBlocking {
		val a = "$key-a"
		val b = "$key-b"
		val heldB = other.acquire(b, LockOptions.defaults())
		val oneSecond = LockOptions.builder().waitTime(Duration.ofSeconds(1)).build()
		val waiting = async(Dispatchers.Default) { runCatching { locks.withLocks(listOf(a, b), oneSecond) { "ran" } } }
		// An attempt in flight may hold the free key for a moment (and each poll's release
		// wakes the waiter to try again), but a wait that kept it would hold it throughout.
		var foundFreeWhileWaiting = 0
		while (!waiting.isCompleted) {
			val free = other.tryAcquire(a, noWait).map { it.release(); true }.orElse(false)
			if (free && !waiting.isCompleted) {
				foundFreeWhileWaiting++
			}
			yield()
		}
		heldB.release()
		assertThat(foundFreeWhileWaiting).`as`("polls that found %s free while %s was waited for", a, b).isPositive()
		assertThat(waiting.await().exceptionOrNull()).isInstanceOf(LockAcquisitionException::class.java)
			.hasMessageContaining(a).hasMessageContaining(b)
		assertThat(freeForOthers()).isTrue()
	}

	@Test
	fun withLocksRefusesNoKeys() {
		assertThatExceptionOfType(IllegalArgumentException::class.java)
			.isThrownBy { runBlocking { locks.withLocks(emptyList()) {} } }
			.withMessageContaining("at least one key")
	}

}
