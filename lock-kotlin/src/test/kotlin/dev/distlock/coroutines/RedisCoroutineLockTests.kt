package dev.distlock.coroutines

import dev.distlock.LockOptions
import dev.distlock.redis.RedisLockProvider
import dev.distlock.support.DefaultAsyncLockTemplate
import dev.distlock.support.DefaultLockTemplate
import dev.distlock.support.RenewalScheduler
import dev.distlock.harness.redis.RedisServer
import java.time.Duration
import java.util.UUID
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.springframework.data.redis.connection.RedisStandaloneConfiguration
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory
import org.springframework.data.redis.core.RedisCallback
import org.springframework.data.redis.core.StringRedisTemplate

/**
 * [withLock] on a real `redis-server`, with two templates on connections of their own
 * standing for two JVMs: coroutines of both exclude each other, with fencing tokens that
 * grow in the order the lock was held, and nothing is left in Redis afterwards.
 */
@Tag("server")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RedisCoroutineLockTests {

	companion object {

		private const val PREFIX = "lock:"

		private lateinit var server: RedisServer

		private val closeables = mutableListOf<AutoCloseable>()

		private lateinit var redis: StringRedisTemplate

		private lateinit var first: DefaultAsyncLockTemplate

		private lateinit var second: DefaultAsyncLockTemplate

		@JvmStatic
		@BeforeAll
		fun startRedis() {
			server = RedisServer.start()
			val factory = connections()
			redis = StringRedisTemplate(factory)
			first = DefaultAsyncLockTemplate(template(factory))
			second = DefaultAsyncLockTemplate(template(connections()))
			// Each template opens its connection before the test, not on a test's first attempt.
			listOf(first, second).forEach { it.acquire("warm-up", LockOptions.defaults()).toCompletableFuture().get().release() }
		}

		@JvmStatic
		@AfterAll
		fun stopRedis() {
			closeables.asReversed().forEach { it.close() }
			server.close()
		}

		private fun connections(): LettuceConnectionFactory {
			val factory = LettuceConnectionFactory(RedisStandaloneConfiguration(server.host(), server.port()))
			factory.afterPropertiesSet()
			factory.start()
			// Connects (and loads the client) with the client's own generous timeout, so that a
			// loaded machine does not fail the lock store's first call.
			factory.connection.use { it.ping() }
			closeables += AutoCloseable { factory.destroy() }
			return factory
		}

		/** A template with a provider, scheduler and owner identity of its own, as another JVM has. */
		private fun template(factory: LettuceConnectionFactory): DefaultLockTemplate {
			val scheduler = RenewalScheduler()
			val provider = RedisLockProvider(factory, PREFIX, false)
			val created = DefaultLockTemplate(provider, scheduler, LockOptions.builder()
				.waitTime(Duration.ofSeconds(60))
				.leaseTime(Duration.ofSeconds(30))
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(100))
				.build())
			closeables += created
			closeables += scheduler
			closeables += provider
			return created
		}

	}

	@Test
	fun coroutinesOfTwoTemplatesHoldTheKeyOneAtATime(): Unit = runBlocking {
		val key = "coroutine-${UUID.randomUUID()}"
		val holders = AtomicInteger()
		val overlaps = AtomicInteger()
		val tokens = CopyOnWriteArrayList<Long>()
		(1..40).map { i ->
			async(Dispatchers.Default) {
				(if (i % 2 == 0) first else second).withLock(key) {
					if (holders.incrementAndGet() != 1) {
						overlaps.incrementAndGet()
					}
					tokens += currentLease()!!.fencingToken()
					// Suspends while holding, so the other template's waiters get their chance to overlap.
					delay(1)
					holders.decrementAndGet()
				}
			}
		}.awaitAll()
		assertThat(overlaps).hasValue(0)
		assertThat(tokens).hasSize(40).isSorted().doesNotHaveDuplicates()
		assertThat(redis.hasKey(PREFIX + key)).isFalse()
	}

	/**
	 * Hundreds of coroutines end their holds while Redis answers nothing (`CLIENT PAUSE`):
	 * their releases wait for the store without a thread parked in any of them, as a
	 * release handed to a thread pool (one blocked thread per release) would have.
	 */
	@Test
	fun releasesAwaitingASlowStoreBlockNoThread() {
		val keys = (1..200).map { "slow-release-${UUID.randomUUID()}" }
		val gate = CompletableDeferred<Unit>()
		val inside = AtomicInteger()
		val scope = CoroutineScope(Dispatchers.Default)
		val holds = keys.map { key -> scope.async { first.withLock(key) { inside.incrementAndGet(); gate.await() } } }
		awaitUntil("every coroutine holds its lock") { inside.get() == keys.size }
		redis.execute(RedisCallback { it.execute("CLIENT", "PAUSE".toByteArray(), "1500".toByteArray()) })
		gate.complete(Unit)
		var mostBlocked = 0
		while (!holds.all { it.isCompleted }) {
			mostBlocked = maxOf(mostBlocked, threadsBlockedInARelease())
			Thread.onSpinWait()
		}
		runBlocking { holds.awaitAll() }
		assertThat(mostBlocked).describedAs("threads blocked in a release while Redis was paused").isZero()
		assertThat(keys.filter { redis.hasKey(PREFIX + it) }).isEmpty()
	}

	private fun threadsBlockedInARelease(): Int = Thread.getAllStackTraces().values.count { stack ->
		stack.any { it.className == "dev.distlock.redis.RedisLockHandle" && it.methodName == "release" }
	}

	private fun awaitUntil(what: String, condition: () -> Boolean) {
		val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
		while (!condition()) {
			check(System.nanoTime() - deadline < 0) { "Timed out waiting until $what" }
			Thread.sleep(1)
		}
	}

}
