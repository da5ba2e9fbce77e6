package dev.distlock.sample.webflux;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stock and the locks default to memory only when no Redis connection is configured,
 * and an explicit choice always wins.
 */
class StoreEnvironmentPostProcessorTests {

	private final StoreEnvironmentPostProcessor postProcessor = new StoreEnvironmentPostProcessor((log) -> log.get());

	@Test
	void defaultsToMemoryWithoutRedis() {
		MockEnvironment environment = postProcess(new MockEnvironment());
		assertThat(environment.getProperty("sample.store")).isEqualTo("in-memory");
		assertThat(environment.getProperty("distributed-lock.store")).isEqualTo("in-memory");
	}

	@ParameterizedTest
	@CsvSource({ "spring.data.redis.host, 127.0.0.1", "spring.data.redis.port, 6379",
			"spring.data.redis.url, redis://127.0.0.1:6379", "spring.data.redis.cluster.nodes, 127.0.0.1:7000" })
	void leavesTheStoresAloneWithRedisConfigured(String property, String value) {
		MockEnvironment environment = postProcess(new MockEnvironment().withProperty(property, value));
		assertThat(environment.containsProperty("sample.store")).isFalse();
		assertThat(environment.containsProperty("distributed-lock.store")).isFalse();
	}

	@Test
	void anExplicitStoreWins() {
		MockEnvironment environment = postProcess(new MockEnvironment().withProperty("sample.store", "redis")
			.withProperty("distributed-lock.store", "redis"));
		assertThat(environment.getProperty("sample.store")).isEqualTo("redis");
		assertThat(environment.getProperty("distributed-lock.store")).isEqualTo("redis");
	}

	private MockEnvironment postProcess(MockEnvironment environment) {
		this.postProcessor.postProcessEnvironment(environment, new SpringApplication());
		return environment;
	}

}
