package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@link AsyncLockTemplate} bean: over the configured lock template, with its locks
 * and defaults; backing off from the application's own, and absent when the lock template
 * is not the library's.
 */
class AsyncLockTemplateAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class,
				DistributedLockAutoConfiguration.class))
		.withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.wait-time=0");

	@Test
	void exposesAnAsyncTemplateSharingTheLockTemplatesLocksAndDefaults() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(AsyncLockTemplate.class).hasSingleBean(DefaultLockTemplate.class);
			AsyncLockTemplate async = context.getBean(AsyncLockTemplate.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			Lease held = locks.acquire("async-bean", LockOptions.defaults());
			// The configured wait time of zero applies: the held lock is not waited for.
			assertThat(async.tryAcquire("async-bean", LockOptions.defaults())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS)).isEmpty();
			held.release();
			String result = async.execute("async-bean", () -> {
				Optional<Lease> inner = locks.tryAcquire("async-bean",
						LockOptions.builder().waitTime(Duration.ZERO).build());
				inner.ifPresent(Lease::release);
				return CompletableFuture.completedFuture(inner.isPresent() ? "re-entered" : "excluded");
			}).toCompletableFuture().get(10, TimeUnit.SECONDS);
			assertThat(result).as("a blocking acquisition inside the action's scope re-enters").isEqualTo("re-entered");
		});
	}

	@Test
	void backsOffFromAUserAsyncTemplate() {
		this.runner.withUserConfiguration(UserAsyncTemplate.class)
			.run((context) -> assertThat(context).getBean(AsyncLockTemplate.class)
				.isSameAs(context.getBean(UserAsyncTemplate.class).template));
	}

	@Test
	void absentWhenTheLockTemplateIsNotTheLibrarys() {
		this.runner.withUserConfiguration(UserTemplate.class)
			.run((context) -> assertThat(context).hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(AsyncLockTemplate.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserAsyncTemplate {

		final AsyncLockTemplate template = new AsyncLockTemplate() {

			@Override
			public CompletionStage<Lease> acquire(String key, LockOptions options) {
				return CompletableFuture.failedFuture(new UnsupportedOperationException());
			}

			@Override
			public CompletionStage<Optional<Lease>> tryAcquire(String key, LockOptions options) {
				return CompletableFuture.completedFuture(Optional.empty());
			}

			@Override
			public <T> CompletionStage<T> execute(String key, LockOptions options,
					Supplier<? extends CompletionStage<T>> action) {
				return action.get();
			}

		};

		@Bean
		AsyncLockTemplate userAsyncTemplate() {
			return this.template;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserTemplate {

		@Bean
		LockTemplate userLockTemplate() {
			return new LockTemplate() {

				@Override
				public <T> T execute(String key, LockOptions options, Supplier<T> action) {
					return action.get();
				}

				@Override
				public Lease acquire(String key, LockOptions options) {
					throw new UnsupportedOperationException();
				}

				@Override
				public Optional<Lease> tryAcquire(String key, LockOptions options) {
					return Optional.empty();
				}

			};
		}

	}

}
