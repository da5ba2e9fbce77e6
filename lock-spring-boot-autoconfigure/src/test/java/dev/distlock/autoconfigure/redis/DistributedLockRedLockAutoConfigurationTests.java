package dev.distlock.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedLockProvider;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * RedLock's auto-configuration on three real masters: opt-in by naming the masters,
 * chosen as any store, and bad input (too few masters, one named twice, a URL that is not
 * a Redis server, an empty prefix) failing startup with the property's name.
 */
@Tag("server")
class DistributedLockRedLockAutoConfigurationTests {

	private static final List<RedisServer> servers = new ArrayList<>();

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(AutoConfigurations
		.of(DistributedLockRedLockAutoConfiguration.class, DistributedLockAutoConfiguration.class));

	@BeforeAll
	static void start() {
		for (int i = 0; i < 3; i++) {
			servers.add(RedisServer.start());
		}
	}

	@AfterAll
	static void stop() {
		servers.forEach(RedisServer::close);
	}

	private static String nodes() {
		return "distributed-lock.redis.redlock.nodes="
				+ String.join(",", servers.stream().map(RedisServer::uri).toList());
	}

	@Test
	void namingTheMastersLocksOnAQuorumOfThem() {
		this.runner.withPropertyValues(nodes()).run((context) -> {
			assertThat(context).hasSingleBean(RedLockProvider.class);
			RedLockProvider provider = context.getBean(RedLockProvider.class);
			assertThat(provider.masters()).isEqualTo(3);
			assertThat(provider.quorum()).isEqualTo(2);
			String key = "auto-configured-" + System.nanoTime();
			context.getBean(LockTemplate.class)
				.run(key,
						() -> assertThat(servers.stream()
							.filter((server) -> server.command("EXISTS", "redlock:" + key).equals(":1"))
							.count()).as("masters holding the lock").isGreaterThanOrEqualTo(2));
		});
	}

	@Test
	void withoutMastersThereIsNoRedLock() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RedLockProvider.class)
			.doesNotHaveBean(LockProvider.class));
	}

	@Test
	void fewerThanThreeMastersFailStartup() {
		assertFailsNaming("distributed-lock.redis.redlock.nodes=" + servers.get(0).uri() + "," + servers.get(1).uri(),
				"at least 3");
	}

	@Test
	void aMasterNamedTwiceFailsStartup() {
		String first = servers.get(0).uri();
		assertFailsNaming(
				"distributed-lock.redis.redlock.nodes=" + first + "," + servers.get(1).uri() + "," + first + "/1",
				"named twice");
	}

	@Test
	void aUrlThatIsNotARedisServerFailsStartup() {
		assertFailsNaming("distributed-lock.redis.redlock.nodes=" + servers.get(0).uri() + "," + servers.get(1).uri()
				+ ",http://example.invalid:80", "not a Redis URI");
	}

	@Test
	void anEmptyKeyPrefixFailsStartup() {
		this.runner.withPropertyValues(nodes(), "distributed-lock.redis.redlock.key-prefix=")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.redis.redlock.key-prefix"));
	}

	@Test
	void withTheApplicationsRedisAlsoAvailableStartupFailsUntilAStoreIsChosen() {
		ApplicationContextRunner both = new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
							DistributedLockRedLockAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues(nodes(), "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + RedisServer.shared().port());
		both.run((context) -> assertThat(context).hasFailed()
			.getFailure()
			.hasStackTraceContaining("Several lock stores are available")
			.hasStackTraceContaining("redlock")
			.hasStackTraceContaining("distributed-lock.store"));
		both.withPropertyValues("distributed-lock.store=redlock")
			.run((context) -> assertThat(context).hasSingleBean(RedLockProvider.class)
				.doesNotHaveBean(RedisLockProvider.class));
		both.withPropertyValues("distributed-lock.store=redis")
			.run((context) -> assertThat(context).hasSingleBean(RedisLockProvider.class)
				.doesNotHaveBean(RedLockProvider.class));
	}

	private void assertFailsNaming(String nodes, String reason) {
		this.runner.withPropertyValues(nodes)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.redis.redlock.nodes")
				.hasMessageContaining(reason));
	}

}
