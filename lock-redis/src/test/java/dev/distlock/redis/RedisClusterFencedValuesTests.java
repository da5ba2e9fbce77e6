package dev.distlock.redis;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.StaleTokenException;
import dev.distlock.harness.redis.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RedisFencedValues} on a real three-master Redis Cluster: keys in every node's
 * slots, each value with its token in its one slot.
 */
@Tag("server")
class RedisClusterFencedValuesTests {

	private static RedisCluster cluster;

	private static LettuceConnectionFactory factory;

	private static RedisFencedValues values;

	@BeforeAll
	static void start() {
		cluster = RedisCluster.start(3);
		factory = new LettuceConnectionFactory(new RedisClusterConfiguration(cluster.addresses()));
		factory.afterPropertiesSet();
		factory.start();
		values = new RedisFencedValues(factory);
	}

	@AfterAll
	static void stop() {
		values.close();
		factory.destroy();
		cluster.close();
	}

	@Test
	void valuesOnEveryNodeAreFenced() {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			keys.add("cluster-fenced:" + i);
		}
		for (String key : keys) {
			values.set(key, "newer", 20);
			assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> values.set(key, "older", 10));
			assertThat(values.compareAndSet(key, "newer", "newest", 30)).isTrue();
			assertThat(values.get(key)).isEqualTo(new FencedValue("newest", 30));
		}
	}

}
