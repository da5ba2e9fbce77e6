package dev.distlock.aop;

import java.util.concurrent.CompletableFuture;

import dev.distlock.DistributedLock;
import dev.distlock.OnFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad annotation fails the application at startup, naming the method and what is wrong.
 */
class DistributedLockStartupFailureTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(DataRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port());

	@Test
	void keyThatDoesNotParse() {
		assertFails(BadSyntax.class, "BadSyntax.work", "not a valid SpEL expression");
	}

	@Test
	void nameWithoutConfiguredOptions() {
		assertFails(UnknownName.class, "UnknownName.work", "distributed-lock.locks.nope is not configured");
	}

	@Test
	void skipOnAMethodReturningAValue() {
		assertFails(SkipReturningInt.class, "SkipReturningInt.work", "onFailure = SKIP");
	}

	@Test
	void durationThatDoesNotParse() {
		assertFails(BadDuration.class, "BadDuration.work", "waitTime = \"soon\"");
	}

	@Test
	void zeroLeaseTime() {
		assertFails(ZeroLease.class, "ZeroLease.work", "must be positive");
	}

	@Test
	void asynchronousReturnType() {
		assertFails(AsyncResult.class, "AsyncResult.work", "asynchronous results are not supported");
	}

	@Test
	void placeholderDurationsResolve() {
		this.runner.withPropertyValues("app.lock-wait=250ms")
			.withUserConfiguration(Placeholder.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	private void assertFails(Class<?> bean, String method, String reason) {
		this.runner.withUserConfiguration(Config.class).withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(lockError(context.getStartupFailure())).hasMessageContaining(method)
				.hasMessageContaining(reason);
		});
	}

	/** The error distlock raised, wherever the container wrapped it. */
	private static Throwable lockError(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalStateException && cause.getMessage().contains("@DistributedLock")) {
				return cause;
			}
		}
		throw new AssertionError("No @DistributedLock error in the startup failure", failure);
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

	}

	static class BadSyntax {

		@DistributedLock(key = "#id +")
		public void work(String id) {
		}

	}

	static class UnknownName {

		@DistributedLock(key = "#id", name = "nope")
		public void work(String id) {
		}

	}

	static class SkipReturningInt {

		@DistributedLock(key = "#id", onFailure = OnFailure.SKIP)
		public int work(String id) {
			return 1;
		}

	}

	static class BadDuration {

		@DistributedLock(key = "#id", waitTime = "soon")
		public void work(String id) {
		}

	}

	static class ZeroLease {

		@DistributedLock(key = "#id", leaseTime = "0s")
		public void work(String id) {
		}

	}

	static class AsyncResult {

		@DistributedLock(key = "#id")
		public CompletableFuture<String> work(String id) {
			return CompletableFuture.completedFuture(id);
		}

	}

	static class Placeholder {

		@DistributedLock(key = "#id", waitTime = "${app.lock-wait}")
		public void work(String id) {
		}

		@Bean
		static String unused() {
			return "";
		}

	}

}
