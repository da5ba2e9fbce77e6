package dev.distlock.redis;

import dev.distlock.harness.redis.RedisCluster;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis Cluster of three masters started for a test class, and two providers on it,
 * each with its own connection factory, as two JVMs would have: what the family's
 * contract suites run on when they run on a cluster.
 */
final class RedisClusterPair implements AutoCloseable {

	final RedisCluster cluster = RedisCluster.start(3);

	private final LettuceConnectionFactory factory = connect();

	private final LettuceConnectionFactory otherFactory = connect();

	final RedisLockProvider provider = new RedisLockProvider(this.factory, TestRedis.PREFIX, true);

	final RedisLockProvider otherProvider = new RedisLockProvider(this.otherFactory, TestRedis.PREFIX, true);

	RedisClusterPair() {
		TestRedis.awaitAnswers(this.provider);
		TestRedis.awaitAnswers(this.otherProvider);
	}

	private LettuceConnectionFactory connect() {
		LettuceConnectionFactory created = new LettuceConnectionFactory(
				new RedisClusterConfiguration(this.cluster.addresses()));
		created.afterPropertiesSet();
		created.start();
		return created;
	}

	@Override
	public void close() {
		this.provider.close();
		this.otherProvider.close();
		this.factory.destroy();
		this.otherFactory.destroy();
		this.cluster.close();
	}

}
