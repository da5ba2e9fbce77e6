package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.aop.LockDeclarationException;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisCluster;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

@Tag("server")
class DistributedLockAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port());

	@Test
	void configuresEverythingOnRedis() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(LockTemplate.class)
				.hasSingleBean(RedisLockProvider.class)
				.hasSingleBean(RenewalScheduler.class)
				.hasSingleBean(DistributedLockAdvisor.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			try (Lease lease = template.acquire("autoconfig-smoke", LockOptions.defaults())) {
				assertThat(lease.isHeld()).isTrue();
			}
		});
	}

	@Test
	void appliesConfiguredDefaults() {
		this.runner.withPropertyValues("distributed-lock.wait-time=0", "distributed-lock.lease-time=2s")
			.run((context) -> {
				LockTemplate template = context.getBean(LockTemplate.class);
				try (Lease held = template.acquire("autoconfig-defaults", LockOptions.defaults())) {
					assertThat(held.isHeld()).isTrue();
					Optional<Lease> other = onOtherThread(
							() -> template.tryAcquire("autoconfig-defaults", LockOptions.defaults()));
					assertThat(other).isEmpty();
				}
			});
	}

	@Test
	void enabledFalseTurnsTheStarterOff() {
		this.runner.withPropertyValues("distributed-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LockTemplate.class)
				.doesNotHaveBean(LockProvider.class)
				.doesNotHaveBean(DistributedLockAdvisor.class)
				.doesNotHaveBean(RenewalScheduler.class));
	}

	@Test
	void withoutRedisThereIsNoProviderAndNoTemplate() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockProvider.class)
				.doesNotHaveBean(LockTemplate.class));
	}

	@Test
	void backsOffFromAUserTemplate() {
		this.runner.withUserConfiguration(UserTemplate.class)
			.run((context) -> assertThat(context).hasSingleBean(LockTemplate.class)
				.getBean(LockTemplate.class)
				.isSameAs(context.getBean(UserTemplate.class).template));
	}

	@Test
	void backsOffFromAUserProviderAndUsesIt() {
		this.runner.withUserConfiguration(UserProvider.class).run((context) -> {
			assertThat(context).hasSingleBean(LockProvider.class).doesNotHaveBean(RedisLockProvider.class);
			context.getBean(LockTemplate.class).run("user-provider", () -> {
			});
			assertThat(context.getBean(UserProvider.class).calls).isEqualTo(1);
		});
	}

	@Test
	void backsOffFromAUserRenewalScheduler() {
		this.runner.withUserConfiguration(UserScheduler.class)
			.run((context) -> assertThat(context).getBean(RenewalScheduler.class)
				.isSameAs(context.getBean(UserScheduler.class).scheduler));
	}

	@Test
	void zeroLeaseTimeFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.lease-time=0s", "distributed-lock.lease-time");
	}

	@Test
	void negativeWaitTimeFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.wait-time=-1s", "distributed-lock.wait-time");
	}

	@Test
	void zeroRetryIntervalFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.retry-interval=0ms", "distributed-lock.retry-interval");
	}

	@Test
	void emptyKeyPrefixFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.redis.key-prefix=", "distributed-lock.redis.key-prefix");
	}

	@Test
	void negativeReplicaCountFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.redis.wait-for-replicas=-1",
				"distributed-lock.redis.wait-for-replicas");
	}

	@Test
	void zeroReplicaTimeoutFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.redis.wait-for-replicas-timeout=0ms",
				"distributed-lock.redis.wait-for-replicas-timeout");
	}

	/**
	 * A store that takes locks but queues no waiters: the Redis provider with only the
	 * minimal contract visible.
	 */
	@Configuration(proxyBeanMethods = false)
	static class StoreWithoutFairLocks {

		@Bean
		LockProvider plainLockProvider(RedisConnectionFactory connectionFactory) {
			RedisLockProvider redis = new RedisLockProvider(connectionFactory, "lock:", false);
			return new LockProvider() {

				@Override
				public CompletionStage<LockAttempt> tryLock(LockRequest request) {
					return redis.tryLock(LockRequest.exclusive(request.key(), request.leaseTime()));
				}

				@Override
				public String storeName() {
					return "plain";
				}

			};
		}

	}

	@Test
	void fairLocksOnAStoreWithoutThemFailStartupNamingThePropertyTheStoreAndTheCapability() {
		this.runner.withUserConfiguration(StoreWithoutFairLocks.class)
			.withPropertyValues("distributed-lock.locks.orders.fair=true")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.locks.orders.fair")
				.hasMessageContaining("plain store")
				.hasMessageContaining("lock kind FAIR"));
	}

	@Test
	void aFairAnnotationOnAStoreWithoutFairLocksFailsStartupNamingTheMethodTheStoreAndTheCapability() {
		this.runner.withUserConfiguration(StoreWithoutFairLocks.class, FairService.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(LockDeclarationException.class)
				.hasMessageContaining("Worker.work")
				.hasMessageContaining("plain store")
				.hasMessageContaining("lock kind FAIR"));
	}

	@Test
	void aStoreWithoutFairLocksStillLocks() {
		this.runner.withUserConfiguration(StoreWithoutFairLocks.class).run((context) -> {
			LockTemplate template = context.getBean(LockTemplate.class);
			try (Lease lease = template.acquire("plain-store", LockOptions.defaults())) {
				assertThat(lease.isHeld()).isTrue();
			}
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class FairService {

		@Bean
		Worker fairWorker() {
			return new Worker();
		}

		static class Worker {

			@DistributedLock(key = "#id", fair = true)
			public void work(String id) {
			}

		}

	}

	/**
	 * A second store's auto-configuration, registered the way every store's is: a
	 * candidate when it is available and distributed-lock.store does not name another.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnLockStore("zookeeper")
	static class SecondStore {

		@Bean
		LockStoreCandidate secondStore() {
			return new LockStoreCandidate("zookeeper");
		}

	}

	@Test
	void twoStoresAndNoStorePropertyFailStartupNamingThePropertyAndTheStores() {
		this.runner.withUserConfiguration(SecondStore.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasMessageContaining("distributed-lock.store")
				.hasMessageContaining("redis, zookeeper"));
	}

	@Test
	void twoStoresAndTheStorePropertyUseTheNamedOne() {
		this.runner.withUserConfiguration(SecondStore.class)
			.withPropertyValues("distributed-lock.store=redis")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RedisLockProvider.class)
				.doesNotHaveBean("secondStore"));
	}

	@Test
	void theInMemoryStoreIsUsedWhenNamedWithoutRedis() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistributedLockRedisAutoConfiguration.class,
					DistributedLockInMemoryAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("distributed-lock.store=in-memory")
			.run((context) -> {
				assertThat(context).hasSingleBean(InMemoryLockProvider.class);
				LockTemplate template = context.getBean(LockTemplate.class);
				try (Lease lease = template.acquire("in-memory-store", LockOptions.defaults())) {
					assertThat(lease.isHeld()).isTrue();
					assertThat(onOtherThread(() -> template.tryAcquire("in-memory-store",
							LockOptions.builder().waitTime(Duration.ZERO).build())))
						.isEmpty();
				}
			});
	}

	@Test
	void theInMemoryStoreIsUsedWhenNamedEvenWithRedisPresent() {
		this.runner.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class))
			.withPropertyValues("distributed-lock.store=in-memory")
			.run((context) -> assertThat(context).hasSingleBean(InMemoryLockProvider.class)
				.doesNotHaveBean(RedisLockProvider.class));
	}

	@Test
	void theInMemoryStoreIsNeverChosenByDefault() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(LockProvider.class)
				.doesNotHaveBean(LockTemplate.class));
	}

	@Test
	void anUnknownStoreFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.store=mongo")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.store")
				.hasMessageContaining("redis"));
	}

	@Test
	void aStoreThatIsNotAvailableFailsStartupNamingTheProperty() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistributedLockRedisAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.withPropertyValues("distributed-lock.store=redis")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.store")
				.hasMessageContaining("not available"));
	}

	@Configuration(proxyBeanMethods = false)
	static class TwoConnectionFactories {

		@Bean
		LettuceConnectionFactory first() {
			return new LettuceConnectionFactory("127.0.0.1", RedisServer.shared().port());
		}

		@Bean
		LettuceConnectionFactory second() {
			return new LettuceConnectionFactory("127.0.0.1", RedisServer.shared().port());
		}

	}

	@Test
	void twoRedisConnectionFactoriesWithoutAPrimaryFailStartupSayingWhatToDo() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistributedLockRedisAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.withUserConfiguration(TwoConnectionFactories.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("several")
				.hasMessageContaining("@Primary"));
	}

	@Test
	void zeroStoreTimeoutFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.store-timeout=0ms", "distributed-lock.store-timeout");
	}

	@Test
	void aReplicaTimeoutNotShorterThanTheStoreTimeoutFailsStartupNamingBoth() {
		this.runner
			.withPropertyValues("distributed-lock.redis.wait-for-replicas=1",
					"distributed-lock.redis.wait-for-replicas-timeout=3s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.redis.wait-for-replicas-timeout")
				.hasMessageContaining("distributed-lock.store-timeout"));
	}

	@Test
	void fairLocksWithTheReplicaGuardFailStartupNamingTheProperty() {
		this.runner
			.withPropertyValues("distributed-lock.redis.wait-for-replicas=1", "distributed-lock.locks.orders.fair=true")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.locks.orders.fair"));
	}

	@Test
	void aJedisConnectionFactoryFailsStartupNamingItAndTheFix() {
		this.runner.withPropertyValues("spring.data.redis.client-type=jedis").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining(JedisConnectionFactory.class.getName())
				.hasMessageContaining("requires Lettuce")
				.hasMessageContaining("spring.data.redis.client-type");
		});
		this.runner.withPropertyValues("spring.data.redis.client-type=jedis", "distributed-lock.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(RedisConnectionFactory.class)
				.as("the factory the check refuses is a real, working Jedis one")
				.isInstanceOf(JedisConnectionFactory.class)
				.satisfies((factory) -> {
					try (var connection = factory.getConnection()) {
						assertThat(connection.ping()).isEqualTo("PONG");
					}
				}));
	}

	@Test
	void theReplicaGuardOnARedisClusterFailsStartupNamingTheProperty() {
		try (RedisCluster cluster = RedisCluster.start(3)) {
			ApplicationContextRunner onCluster = new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
						DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", cluster.addresses()));
			onCluster.withPropertyValues("distributed-lock.redis.wait-for-replicas=1").run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOf(InvalidConfigurationPropertyValueException.class)
					.hasMessageContaining("distributed-lock.redis.wait-for-replicas")
					.hasMessageContaining("Redis Cluster");
			});
			onCluster.run((context) -> {
				try (Lease lease = context.getBean(LockTemplate.class)
					.acquire("autoconfig-cluster", LockOptions.defaults())) {
					assertThat(lease.isHeld()).isTrue();
				}
			});
		}
	}

	@Test
	void invalidNamedLeaseFailsStartupNamingTheProperty() {
		assertStartupFailsNaming("distributed-lock.locks.stock.lease-time=-5s",
				"distributed-lock.locks.stock.lease-time");
	}

	@Test
	void nonDurationFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.lease-time=forever")
			.run((context) -> assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("forever"));
		this.runner.withPropertyValues("distributed-lock.lease-time=forever")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("distributed-lock.lease-time"));
	}

	private void assertStartupFailsNaming(String property, String name) {
		this.runner.withPropertyValues(property)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining(name));
	}

	/** Locks are reentrant per thread, so a competing caller must be another thread. */
	static <T> T onOtherThread(Supplier<T> call) throws Exception {
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			return executor.submit(call::get).get(30, TimeUnit.SECONDS);
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class UserTemplate {

		final LockTemplate template = new LockTemplate() {

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

		@Bean
		LockTemplate userLockTemplate() {
			return this.template;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserProvider {

		int calls;

		@Bean
		LockProvider userLockProvider() {
			return (request) -> {
				this.calls++;
				String key = request.key();
				return CompletableFuture.completedFuture(new LockAttempt.Acquired(new dev.distlock.spi.LockHandle() {

					@Override
					public String key() {
						return key;
					}

					@Override
					public long fencingToken() {
						return 1;
					}

					@Override
					public boolean renew(Duration leaseTime) {
						return true;
					}

					@Override
					public boolean release() {
						return true;
					}

				}));
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserScheduler {

		final RenewalScheduler scheduler = new RenewalScheduler();

		@Bean
		RenewalScheduler userRenewalScheduler() {
			return this.scheduler;
		}

	}

}
