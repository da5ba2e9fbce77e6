package dev.distlock.aop;

import java.time.Duration;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A lease lost while the annotated method runs is reported: thrown after the method
 * returns, or added as suppressed to the method's own exception. The loss is provoked by
 * deleting the key behind the holder's back, as an expiry during a long pause or a
 * failover would.
 */
@Tag("server")
class LeaseLossAnnotationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"distributed-lock.lease-time=300ms")
		.withUserConfiguration(Config.class);

	@Test
	void lossIsThrownAfterTheMethodReturns() {
		this.runner.run((context) -> {
			Worker worker = context.getBean(Worker.class);
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> worker.loseLease("lost-1", false))
				.withMessageContaining("lost-1");
			assertThat(worker.completed()).isTrue();
		});
	}

	@Test
	void lossIsSuppressedIntoTheMethodsOwnException() {
		this.runner.run((context) -> {
			Worker worker = context.getBean(Worker.class);
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> worker.loseLease("lost-2", true))
				.withMessage("the method's own failure")
				.satisfies(
						(ex) -> assertThat(ex.getSuppressed()).singleElement().isInstanceOf(LeaseLostException.class));
		});
	}

	static class Worker {

		private final StringRedisTemplate redis;

		private volatile boolean completed;

		Worker(StringRedisTemplate redis) {
			this.redis = redis;
		}

		boolean completed() {
			return this.completed;
		}

		@DistributedLock(key = "#key")
		public void loseLease(String key, boolean fail) {
			Lease lease = LockContext.current().orElseThrow();
			this.redis.delete("lock:" + key);
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (lease.isHeld() && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			assertThat(lease.isHeld()).as("renewal noticed the loss").isFalse();
			this.completed = true;
			if (fail) {
				throw new IllegalStateException("the method's own failure");
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		Worker worker(StringRedisTemplate redis) {
			return new Worker(redis);
		}

	}

}
