package dev.distlock.autoconfigure.ops;

import java.util.UUID;

import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * distlock follows Spring Boot's {@code ConnectionDetails}: a
 * {@link DataRedisConnectionDetails} bean, as {@code @ServiceConnection} on a
 * Testcontainers Redis container defines one, wins over {@code spring.data.redis.*}, and
 * the lock lands on the server it names. No Docker: the details name a real
 * {@code redis-server} this test starts; the properties name another.
 */
@Tag("server")
class ConnectionDetailsTests {

	@Test
	void theLockLandsOnTheServerOfTheConnectionDetails() {
		try (RedisServer detailsServer = RedisServer.start()) {
			RedisServer propertiesServer = RedisServer.shared();
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
						DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
				.withPropertyValues("spring.data.redis.host=127.0.0.1",
						"spring.data.redis.port=" + propertiesServer.port())
				.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
					@Override
					public Standalone getStandalone() {
						return Standalone.of("127.0.0.1", detailsServer.port());
					}
				})
				.run((context) -> {
					String key = "details-" + UUID.randomUUID();
					context.getBean(LockTemplate.class).run(key, () -> {
						assertThat(detailsServer.command("EXISTS", "lock:" + key)).as("the details' server")
							.isEqualTo(":1");
						assertThat(propertiesServer.command("EXISTS", "lock:" + key)).as("the properties' server")
							.isEqualTo(":0");
					});
				});
		}
	}

}
