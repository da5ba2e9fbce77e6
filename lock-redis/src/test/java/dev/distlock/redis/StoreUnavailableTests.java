package dev.distlock.redis;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis that does not answer, with the client's default settings (Lettuce's command
 * timeout of 60 s, as Spring Boot leaves it): no call blocks past its own bound. An
 * acquire ends within its wait time plus one store timeout, a release and a renewal
 * within a store timeout, and the failure says the store failed, for the caller stuck on
 * the store and for the callers of this JVM queued behind it.
 *
 * <p>
 * The bounds asserted are generous (several seconds of slack) but far below the client's
 * 60 s: with the calls left to the client's timeout, every test here fails.
 */
@Tag("server")
class StoreUnavailableTests {

	/** The documented default of distributed-lock.store-timeout. */
	private static final Duration STORE_TIMEOUT = RedisLockProvider.DEFAULT_STORE_TIMEOUT;

	private static final Duration SLACK = Duration.ofSeconds(4);

	private RedisServer redis;

	private LettuceConnectionFactory factory;

	private RenewalScheduler scheduler;

	private DefaultLockTemplate template;

	private final ExecutorService callers = Executors.newCachedThreadPool();

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.factory = defaultClient(this.redis.port());
		this.scheduler = new RenewalScheduler();
		this.template = new DefaultLockTemplate(new RedisLockProvider(this.factory, "lock:", false), this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ZERO)
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
	}

	@AfterEach
	void stop() {
		this.redis.resume();
		this.callers.shutdownNow();
		this.template.close();
		this.scheduler.close();
		this.factory.destroy();
		this.redis.close();
	}

	/**
	 * A connection factory with Lettuce's and Boot's defaults: a 60 s command timeout.
	 */
	static LettuceConnectionFactory defaultClient(int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port), LettuceClientConfiguration.defaultConfiguration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static LockOptions waitFor(Duration wait) {
		return LockOptions.builder().waitTime(wait).build();
	}

	@Test
	void anAcquireOnAHungRedisFailsWithinItsWaitPlusTheStoreTimeoutSayingTheStoreFailed() {
		this.template.run("warm-up", () -> {
		});
		this.redis.pause();
		Duration wait = Duration.ofSeconds(1);
		long start = System.nanoTime();
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> this.template.acquire("hung", waitFor(wait)))
			.withMessageContaining("did not answer within " + STORE_TIMEOUT.toMillis() + "ms")
			.withMessageContaining("distributed-lock.store-timeout");
		assertThat(elapsed(start)).isLessThan(wait.plus(STORE_TIMEOUT).plus(SLACK));
	}

	@Test
	void callersQueuedBehindACallStuckOnTheStoreGetTheStoreFailureNotAWaitTimeout() throws Exception {
		this.template.run("warm-up", () -> {
		});
		this.redis.pause();
		long start = System.nanoTime();
		CompletableFuture<Throwable> first = failureOf(
				() -> this.template.acquire("stock:x", waitFor(Duration.ofSeconds(5))));
		Conditions.await("the first caller at the gate", Duration.ofSeconds(5), () -> this.template.queuedKeys() == 1);
		CompletableFuture<Throwable> second = failureOf(
				() -> this.template.acquire("stock:x", waitFor(Duration.ofMillis(500))));
		CompletableFuture<Throwable> third = failureOf(
				() -> this.template.acquire("stock:x", waitFor(Duration.ofSeconds(5))));
		for (CompletableFuture<Throwable> caller : java.util.List.of(first, second, third)) {
			assertThat(caller.get(30, TimeUnit.SECONDS)).isInstanceOf(LockBackendException.class)
				.hasMessageContaining("did not answer");
		}
		assertThat(elapsed(start)).isLessThan(Duration.ofSeconds(5).plus(STORE_TIMEOUT).plus(SLACK));
	}

	@Test
	void aReleaseOnAHungRedisFailsWithinTheStoreTimeout() {
		Lease lease = this.template.acquire("held", waitFor(Duration.ZERO));
		this.redis.pause();
		long start = System.nanoTime();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(lease::release)
			.withMessageContaining("to release lock 'held'");
		assertThat(elapsed(start)).isLessThan(STORE_TIMEOUT.plus(SLACK));
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void aHeldLeaseOnAHungRedisIsDeclaredLostAtItsDeadlineAndRenewalRecoversForLaterLeases() {
		Duration leaseTime = Duration.ofSeconds(2);
		Lease lease = this.template.acquire("renewed", LockOptions.builder().leaseTime(leaseTime).build());
		this.redis.pause();
		long start = System.nanoTime();
		Conditions.await("the lease declared lost", leaseTime.plus(SLACK), () -> !lease.isHeld());
		assertThat(elapsed(start)).isLessThan(leaseTime.plus(SLACK));
		this.redis.resume();
		// The renewal threads were not left stuck on the hung calls: a new lease is
		// renewed past several lease times.
		Lease next = this.template.acquire("renewed-after",
				LockOptions.builder().waitTime(Duration.ofSeconds(5)).leaseTime(Duration.ofMillis(900)).build());
		long renewedUntil = System.nanoTime() + Duration.ofMillis(2700).toNanos();
		Conditions.await("three lease times passed", Duration.ofSeconds(10), () -> System.nanoTime() > renewedUntil);
		assertThat(next.isHeld()).isTrue();
		next.release();
	}

	@Test
	void aRedisThatNeverAnsweredFailsTheFirstAcquireWithinItsWaitPlusTheStoreTimeout() {
		// Paused before any connection exists: TCP connects, the handshake never ends.
		this.redis.pause();
		long start = System.nanoTime();
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> this.template.acquire("never", waitFor(Duration.ofMillis(500))))
			.withMessageContaining("did not answer");
		assertThat(elapsed(start)).isLessThan(Duration.ofMillis(500).plus(STORE_TIMEOUT).plus(SLACK));
		this.redis.resume();
		Conditions.await("the store answers again", Duration.ofSeconds(60), () -> {
			try {
				this.template.run("never", () -> {
				});
				return true;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
	}

	private CompletableFuture<Throwable> failureOf(Supplier<?> call) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				call.get();
				return null;
			}
			catch (Throwable ex) {
				return ex;
			}
		}, this.callers);
	}

	private static Duration elapsed(long startNanos) {
		return Duration.ofNanos(System.nanoTime() - startNanos);
	}

}
