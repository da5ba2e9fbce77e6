package dev.distlock.autoconfigure.zookeeper;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;
import dev.distlock.zookeeper.ZookeeperLockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ZooKeeper store's auto-configuration, on a real in-process ZooKeeper server: the
 * client built from {@code distributed-lock.zookeeper.*} or the application's own, bad
 * properties named at startup, and the choice between stores.
 */
@Tag("server")
class DistributedLockZookeeperAutoConfigurationTests {

	private static TestingServer server;

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations
		.of(DistributedLockZookeeperAutoConfiguration.class, DistributedLockAutoConfiguration.class));

	@BeforeAll
	static void start() throws Exception {
		System.setProperty("zookeeper.admin.enableServer", "false");
		server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1,
				Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1"), true);
	}

	@AfterAll
	static void stop() throws IOException {
		server.close();
	}

	private static String connectString() {
		return "distributed-lock.zookeeper.connect-string=" + server.getConnectString();
	}

	@Test
	void buildsAClientFromTheConnectStringAndLocksInZookeeper() {
		this.runner.withPropertyValues(connectString(), "distributed-lock.zookeeper.session-timeout=20s")
			.run((context) -> {
				assertThat(context).hasSingleBean(ZookeeperLockProvider.class).hasSingleBean(CuratorFramework.class);
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(client.blockUntilConnected(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
				assertThat(client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs()).isEqualTo(20_000);
				LockTemplate template = context.getBean(LockTemplate.class);
				assertThat(template.execute("auto-configured",
						() -> zookeeper(() -> client.getChildren().forPath("/distributed-lock"))))
					.contains("auto-configured");
			});
	}

	@Test
	void usesTheApplicationsCuratorFramework() {
		this.runner.withUserConfiguration(UserClient.class).run((context) -> {
			assertThat(context).hasSingleBean(CuratorFramework.class).hasSingleBean(ZookeeperLockProvider.class);
			assertThat(context.getBean(CuratorFramework.class)).isSameAs(context.getBean(UserClient.class).client);
			context.getBean(LockTemplate.class).run("user-client", () -> {
			});
		});
	}

	@Test
	void aCustomBasePathHoldsTheKeys() {
		this.runner.withPropertyValues(connectString(), "distributed-lock.zookeeper.base-path=/apps/orders/locks")
			.run((context) -> {
				CuratorFramework client = context.getBean(CuratorFramework.class);
				assertThat(context.getBean(LockTemplate.class)
					.execute("custom-base",
							() -> zookeeper(() -> client.checkExists().forPath("/apps/orders/locks/custom-base"))))
					.isNotNull();
			});
	}

	@Test
	void withoutAClientOrAConnectStringThereIsNoZookeeperStore() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(LockProvider.class)
			.doesNotHaveBean(CuratorFramework.class));
	}

	@Test
	void anUnstartedApplicationClientFailsStartupSayingSo() {
		this.runner.withUserConfiguration(UnstartedClient.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("The CuratorFramework must be started"));
	}

	@Test
	void aBlankConnectStringFailsStartupNamingTheProperty() {
		failsNaming("distributed-lock.zookeeper.connect-string", "distributed-lock.zookeeper.connect-string= ");
	}

	@Test
	void aRelativeBasePathFailsStartupNamingTheProperty() {
		failsNaming("distributed-lock.zookeeper.base-path", connectString(),
				"distributed-lock.zookeeper.base-path=locks/");
	}

	@Test
	void aZeroSessionTimeoutFailsStartupNamingTheProperty() {
		failsNaming("distributed-lock.zookeeper.session-timeout", connectString(),
				"distributed-lock.zookeeper.session-timeout=0");
	}

	@Test
	void aNegativeRetryCountFailsStartupNamingTheProperty() {
		failsNaming("distributed-lock.zookeeper.retry.max-retries", connectString(),
				"distributed-lock.zookeeper.retry.max-retries=-1");
	}

	@Test
	void aZeroStoreTimeoutFailsStartupNamingTheProperty() {
		failsNaming("distributed-lock.store-timeout", connectString(), "distributed-lock.store-timeout=0");
	}

	private void failsNaming(String property, String... properties) {
		this.runner.withPropertyValues(properties)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining(property));
	}

	@Test
	void withRedisAlsoAvailableStartupFailsUntilAStoreIsChosen() {
		ApplicationContextRunner both = new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
							DistributedLockZookeeperAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues(connectString(), "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + RedisServer.shared().port());
		both.run((context) -> assertThat(context).hasFailed()
			.getFailure()
			.hasStackTraceContaining("Several lock stores are available")
			.hasStackTraceContaining("zookeeper")
			.hasStackTraceContaining("distributed-lock.store"));
		both.withPropertyValues("distributed-lock.store=zookeeper")
			.run((context) -> assertThat(context).hasSingleBean(ZookeeperLockProvider.class)
				.doesNotHaveBean(RedisLockProvider.class));
		both.withPropertyValues("distributed-lock.store=redis")
			.run((context) -> assertThat(context).hasSingleBean(RedisLockProvider.class)
				.doesNotHaveBean(ZookeeperLockProvider.class)
				.doesNotHaveBean(CuratorFramework.class));
	}

	private static <T> T zookeeper(java.util.concurrent.Callable<T> call) {
		try {
			return call.call();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * ZooKeeper offers read-write locks and semaphores, so annotations asking for them
	 * pass the startup check; a read lock keeps the writer's side of its key out.
	 */
	@Test
	void readLocksAndSemaphoresPassTheStartupCheck() {
		this.runner.withPropertyValues(connectString())
			.withUserConfiguration(CatalogConfiguration.class)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				Catalog catalog = context.getBean(Catalog.class);
				LockTemplate template = context.getBean(LockTemplate.class);
				assertThat(catalog.read(() -> onOtherThread(
						() -> template.tryAcquire("catalog", LockOptions.builder().waitTime(Duration.ZERO).build())
							.map((lease) -> {
								lease.release();
								return "written";
							})
							.orElse("kept out"))))
					.isEqualTo("kept out");
				assertThat(catalog.export()).isEqualTo("exported");
			});
	}

	private static String onOtherThread(Callable<String> call) {
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			return executor.submit(call).get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class CatalogConfiguration {

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

	}

	static class Catalog {

		@DistributedLock(key = "'catalog'", mode = LockMode.READ)
		public String read(Supplier<String> whileRead) {
			return whileRead.get();
		}

		@DistributedLock(key = "'exports'", permits = 2)
		public String export() {
			return "exported";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserClient {

		final CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
				new ExponentialBackoffRetry(100, 3));

		@Bean(destroyMethod = "close")
		CuratorFramework userCuratorFramework() {
			this.client.start();
			return this.client;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnstartedClient {

		@Bean
		CuratorFramework unstartedCuratorFramework() {
			return CuratorFrameworkFactory.newClient(server.getConnectString(), new ExponentialBackoffRetry(100, 3));
		}

	}

}
