package dev.distlock.autoconfigure.reactive;

import java.time.Duration;
import java.util.Collection;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.reactive.Acquisition;
import dev.distlock.reactive.ReactiveLockTemplate;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@link ReactiveLockTemplate} bean: present with Reactor on the class path, over the
 * configured lock template with its locks and defaults; absent without Reactor, when
 * locks are disabled, or when the lock template is not the library's; backing off from
 * the application's own.
 */
class DistributedLockReactiveAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class,
				DistributedLockAutoConfiguration.class, DistributedLockReactiveAutoConfiguration.class))
		.withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.wait-time=0");

	@Test
	void exposesAReactiveTemplateSharingTheLockTemplatesLocksAndDefaults() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(ReactiveLockTemplate.class).hasSingleBean(DefaultLockTemplate.class);
			ReactiveLockTemplate reactive = context.getBean(ReactiveLockTemplate.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			Lease held = locks.acquire("reactive-bean", LockOptions.defaults());
			// The configured wait time of zero applies: the held lock is not waited for.
			assertThat(
					reactive.tryAcquire("reactive-bean", LockOptions.defaults()).blockOptional(Duration.ofSeconds(10)))
				.isEmpty();
			held.release();
			assertThat(reactive.executeMono("reactive-bean", LockOptions.defaults(), () -> Mono.just("ran"))
				.block(Duration.ofSeconds(10))).isEqualTo("ran");
		});
	}

	@Test
	void absentWithoutReactor() {
		this.runner.withClassLoader(new FilteredClassLoader(Mono.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(ReactiveLockTemplate.class));
	}

	@Test
	void absentWhenLocksAreDisabled() {
		this.runner.withPropertyValues("distributed-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(ReactiveLockTemplate.class));
	}

	@Test
	void absentWhenTheLockTemplateIsNotTheLibrarys() {
		this.runner.withUserConfiguration(UserTemplate.class)
			.run((context) -> assertThat(context).hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(ReactiveLockTemplate.class));
	}

	@Test
	void backsOffFromAUserReactiveTemplate() {
		this.runner.withUserConfiguration(UserReactiveTemplate.class)
			.run((context) -> assertThat(context).getBean(ReactiveLockTemplate.class)
				.isSameAs(context.getBean(UserReactiveTemplate.class).template));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserReactiveTemplate {

		final ReactiveLockTemplate template = new ReactiveLockTemplate() {

			@Override
			public Mono<Lease> acquire(String key, LockOptions options) {
				return Mono.error(new UnsupportedOperationException());
			}

			@Override
			public Mono<Lease> tryAcquire(String key, LockOptions options) {
				return Mono.empty();
			}

			@Override
			public Mono<MultiLease> acquireAll(Collection<String> keys, LockOptions options) {
				return Mono.error(new UnsupportedOperationException());
			}

			@Override
			public Mono<MultiLease> tryAcquireAll(Collection<String> keys, LockOptions options) {
				return Mono.empty();
			}

			@Override
			public Mono<Void> release(Lease lease) {
				return Mono.empty();
			}

			@Override
			public Acquisition lock(String key, LockOptions options) {
				throw new UnsupportedOperationException();
			}

			@Override
			public Acquisition lockAll(Collection<String> keys, LockOptions options) {
				throw new UnsupportedOperationException();
			}

			@Override
			public <T> Flux<T> holding(Acquisition acquisition, Supplier<? extends Publisher<T>> work) {
				return Flux.from(work.get());
			}

			@Override
			public <T> Mono<T> holdingMono(Acquisition acquisition, Supplier<? extends Mono<T>> work) {
				return work.get();
			}

		};

		@Bean
		ReactiveLockTemplate userReactiveTemplate() {
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
				public java.util.Optional<Lease> tryAcquire(String key, LockOptions options) {
					return java.util.Optional.empty();
				}

			};
		}

	}

}
