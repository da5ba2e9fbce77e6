package dev.distlock.aop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockLostEvent;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * A lease lost while its holder runs is known at once: a {@link LockLostEvent} is
 * published within one renewal interval, and {@code on-lease-lost} decides what the
 * holder sees (fail on exit, an interrupt, or only the log). The loss is provoked by
 * deleting the key, as an expiry during a pause or a failover would, or by killing Redis,
 * so that renewals hang until the deadline watchdog declares the lease lost.
 */
@Tag("server")
class LeaseLostActionTests {

	private static final Duration LEASE = Duration.ofMillis(600);

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"distributed-lock.lease-time=" + LEASE.toMillis() + "ms",
				"distributed-lock.locks.relaxed.on-lease-lost=log")
		.withUserConfiguration(Config.class);

	@Test
	void aLossIsPublishedWithinOneRenewalIntervalAndThrownOnExitByDefault() {
		this.runner.run((context) -> {
			Holder holder = context.getBean(Holder.class);
			Events events = context.getBean(Events.class);
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> holder.loseLease("lla-1", events))
				.withMessageContaining("lla-1");
			LockLostEvent event = events.received.get(0);
			assertThat(event.getKey()).isEqualTo("lla-1");
			assertThat(event.getFencingToken()).isEqualTo(holder.token());
			assertThat(event.getHolderThread()).isEqualTo(Thread.currentThread().getName());
			assertThat(event.getReason()).contains("renewal found the key expired or held by another owner");
			System.out.printf("Lease loss (key deleted) published %d ms after the deletion; renewal interval %d ms%n",
					holder.detectedAfter().toMillis(), LEASE.toMillis() / 3);
			assertThat(holder.detectedAfter()).as("time from deletion to the event").isLessThan(LEASE);
			assertThat(holder.completed()).isTrue();
		});
	}

	@Test
	void interruptStopsTheHolderAtOnceAndStillFailsOnExit() {
		this.runner.withPropertyValues("distributed-lock.on-lease-lost=interrupt").run((context) -> {
			Holder holder = context.getBean(Holder.class);
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> holder.sleepUntilInterrupted("lla-2"));
			assertThat(holder.interrupted()).as("holder interrupted").isTrue();
			assertThat(holder.detectedAfter()).as("time from deletion to the interrupt").isLessThan(LEASE);
			Thread.interrupted();
		});
	}

	@Test
	void logLetsTheCallCompleteAndStillPublishes() {
		this.runner.run((context) -> {
			Holder holder = context.getBean(Holder.class);
			Events events = context.getBean(Events.class);
			assertThat(holder.loseLeaseRelaxed("lla-3", events)).isEqualTo("done");
			assertThat(events.received).singleElement()
				.satisfies((event) -> assertThat(event.getKey()).isEqualTo("lla-3"));
		});
	}

	@Test
	void aHungRedisIsDeclaredLostAtTheLeaseDeadlineNotAtTheCommandTimeout() {
		try (RedisServer server = RedisServer.start()) {
			this.runner.withPropertyValues("spring.data.redis.port=" + server.port()).run((context) -> {
				Holder holder = context.getBean(Holder.class);
				Events events = context.getBean(Events.class);
				assertThatExceptionOfType(LeaseLostException.class)
					.isThrownBy(() -> holder.killRedisWhileHolding("lla-4", server, events))
					.withMessageContaining("lease deadline");
				assertThat(events.received).singleElement()
					.satisfies((event) -> assertThat(event.getReason()).contains("lease deadline"));
				System.out.printf("Lease loss (Redis killed) published %d ms after the kill; lease %d ms%n",
						holder.detectedAfter().toMillis(), LEASE.toMillis());
				assertThat(holder.detectedAfter()).as("time from kill to the event, far below the 3s command timeout")
					.isLessThan(LEASE.multipliedBy(2));
			});
		}
	}

	static void await(String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("timed out waiting for: " + what);
			}
			LockSupport.parkNanos(500_000);
		}
	}

	static class Holder {

		private final StringRedisTemplate redis;

		volatile long token;

		volatile boolean completed;

		volatile boolean interrupted;

		volatile Duration detectedAfter = Duration.ZERO;

		Holder(StringRedisTemplate redis) {
			this.redis = redis;
		}

		// Read through these: the test holds a class-based proxy, whose own fields are
		// never set.

		public long token() {
			return this.token;
		}

		public boolean completed() {
			return this.completed;
		}

		public boolean interrupted() {
			return this.interrupted;
		}

		public Duration detectedAfter() {
			return this.detectedAfter;
		}

		@DistributedLock(key = "#key")
		public void loseLease(String key, Events events) {
			Lease lease = LockContext.current().orElseThrow();
			this.token = lease.fencingToken();
			long start = System.nanoTime();
			this.redis.delete("lock:" + key);
			await("the loss event", () -> !events.received.isEmpty());
			this.detectedAfter = Duration.ofNanos(System.nanoTime() - start);
			assertThat(lease.isHeld()).isFalse();
			this.completed = true;
		}

		@DistributedLock(key = "#key", name = "relaxed")
		public String loseLeaseRelaxed(String key, Events events) {
			this.redis.delete("lock:" + key);
			await("the loss event", () -> !events.received.isEmpty());
			return "done";
		}

		@DistributedLock(key = "#key")
		public void sleepUntilInterrupted(String key) {
			long start = System.nanoTime();
			this.redis.delete("lock:" + key);
			try {
				Thread.sleep(30_000);
			}
			catch (InterruptedException ex) {
				this.interrupted = true;
				this.detectedAfter = Duration.ofNanos(System.nanoTime() - start);
			}
		}

		@DistributedLock(key = "#key")
		public void killRedisWhileHolding(String key, RedisServer server, Events events) {
			long start = System.nanoTime();
			server.kill();
			await("the loss event", () -> !events.received.isEmpty());
			this.detectedAfter = Duration.ofNanos(System.nanoTime() - start);
		}

	}

	static class Events implements ApplicationListener<LockLostEvent> {

		final List<LockLostEvent> received = new CopyOnWriteArrayList<>();

		@Override
		public void onApplicationEvent(LockLostEvent event) {
			this.received.add(event);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		Holder holder(StringRedisTemplate redis) {
			return new Holder(redis);
		}

		@Bean
		Events events() {
			return new Events();
		}

	}

}
