package dev.distlock.autoconfigure.redis;

import java.util.UUID;

import dev.distlock.StaleTokenException;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.FencedValue;
import dev.distlock.redis.RedisFencedValues;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The Redis fence's auto-configuration against a real {@code redis-server}, with Boot's
 * own Redis auto-configuration.
 */
@Tag("server")
class DistributedLockRedisFenceAutoConfigurationTests {

	private static RedisServer redis;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockRedisFenceAutoConfiguration.class));

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	private ApplicationContextRunner withRedis() {
		return this.runner.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
	}

	@Test
	void fencesValuesInTheApplicationsRedis() {
		withRedis().run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(RedisFencedValues.class);
			RedisFencedValues values = context.getBean(RedisFencedValues.class);
			String key = "autoconfig:" + UUID.randomUUID();
			values.set(key, "newer", 5);
			assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> values.set(key, "older", 4));
			assertThat(values.get(key)).isEqualTo(new FencedValue("newer", 5));
		});
	}

	@Test
	void backsOffForTheApplicationsOwnValues() {
		withRedis().withUserConfiguration(OwnValues.class)
			.run((context) -> assertThat(context).hasSingleBean(RedisFencedValues.class).hasBean("myValues"));
	}

	@Test
	void isOffWithoutRedisOrWithDistributedLockDisabled() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(RedisFencedValues.class));
		withRedis().withPropertyValues("distributed-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(RedisFencedValues.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnValues {

		@Bean
		RedisFencedValues myValues(LettuceConnectionFactory connectionFactory) {
			return new RedisFencedValues(connectionFactory);
		}

	}

}
