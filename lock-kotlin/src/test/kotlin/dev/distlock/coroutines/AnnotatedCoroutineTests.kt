package dev.distlock.coroutines

import dev.distlock.DistributedLock
import dev.distlock.LockOptions
import dev.distlock.config.EnableDistributedLocks
import dev.distlock.inmemory.InMemoryLockProvider
import dev.distlock.spi.LockProvider
import dev.distlock.support.DefaultLockTemplate
import dev.distlock.support.RenewalScheduler
import java.time.Duration
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Timeout
import org.springframework.context.annotation.AnnotationConfigApplicationContext
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration

/**
 * `@DistributedLock` on a suspend function and on a function returning a [Flow], through
 * Spring's advice over the in-memory store: the lock is held from before the function's
 * body until it returns (across every suspension), or for a flow until its collection
 * ends; callers exclude each other; the lease is in the coroutine's context.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AnnotatedCoroutineTests {

    private val context = AnnotationConfigApplicationContext(Store::class.java, Stock::class.java)

    private val stock = context.getBean(Stock::class.java)

    private val other = context.getBean(Store::class.java).other

    @AfterEach
    fun close() {
        other.close()
        context.close()
    }

    @Test
    fun aSuspendFunctionHoldsItsLockAcrossItsSuspensionsAndCallersExcludeEachOther(): Unit = runBlocking {
        stock.items.set(10)
        val sold = (1..20).map { async(Dispatchers.Default) { stock.sell("sku-1") } }.awaitAll()
        assertThat(sold.count { it }).isEqualTo(10)
        assertThat(stock.items.get()).isZero()
        assertThat(stock.overlaps.get()).`as`("two callers inside at once").isZero()
        assertThat(stock.leaseKeys).allMatch { it == "stock:sku-1" }
        assertThat(other.tryAcquire("stock:sku-1", NO_WAIT)).`as`("released once done").hasValueSatisfying { it.release() }
    }

    @Test
    fun aFlowIsLockedWhileItIsCollected(): Unit = runBlocking {
        val seen = stock.feed("sku-2").toList()
        assertThat(seen).containsExactly(true, true)
        assertThat(other.tryAcquire("feed:sku-2", NO_WAIT)).`as`("released once collected").hasValueSatisfying { it.release() }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableDistributedLocks
    open class Store {

        private val store = InMemoryLockProvider()

        private val scheduler = RenewalScheduler()

        val other = DefaultLockTemplate(store, scheduler, OPTIONS)

        @Bean
        open fun lockProvider(): InMemoryLockProvider = store

        @Bean(destroyMethod = "close")
        open fun renewalScheduler(): RenewalScheduler = scheduler

        @Bean
        open fun lockTemplate(lockProvider: LockProvider): DefaultLockTemplate =
            DefaultLockTemplate(lockProvider, scheduler, OPTIONS)

    }

    open class Stock {

        open val items = AtomicInteger()

        open val overlaps = AtomicInteger()

        open val leaseKeys = java.util.concurrent.ConcurrentLinkedQueue<String>()

        private val inside = AtomicInteger()

        @DistributedLock(key = "'stock:' + #sku")
        open suspend fun sell(sku: String): Boolean {
            if (inside.incrementAndGet() > 1) {
                overlaps.incrementAndGet()
            }
            try {
                leaseKeys.add(currentLease()?.key() ?: "none")
                val left = items.get()
                // Suspends: another caller must not get in meanwhile.
                delay(5)
                if (left == 0) {
                    return false
                }
                items.set(left - 1)
                return true
            } finally {
                inside.decrementAndGet()
            }
        }

        @DistributedLock(key = "'feed:' + #sku")
        open fun feed(sku: String): Flow<Boolean> = flow {
            emit(currentLease()?.key() == "feed:$sku")
            delay(20)
            emit(currentLease() != null)
        }

    }

    private companion object {
        val NO_WAIT: LockOptions = LockOptions.builder().waitTime(Duration.ZERO).build()

        val OPTIONS: LockOptions = LockOptions.builder()
            .waitTime(Duration.ofSeconds(30))
            .leaseTime(Duration.ofSeconds(30))
            .autoRenew(true)
            .retryInterval(Duration.ofMillis(100))
            .build()
    }

}
