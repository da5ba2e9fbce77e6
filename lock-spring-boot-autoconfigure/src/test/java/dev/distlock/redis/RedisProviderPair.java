package dev.distlock.redis;

import dev.distlock.testsupport.RedisServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Two providers on the shared test {@code redis-server}, each with its own connection
 * factory, as two JVMs would have: what the family's contract suites run on.
 */
final class RedisProviderPair implements AutoCloseable {

	private final LettuceConnectionFactory factory = TestRedis.connectionFactory(RedisServer.shared());

	private final LettuceConnectionFactory otherFactory = TestRedis.connectionFactory(RedisServer.shared());

	final RedisLockProvider provider = new RedisLockProvider(this.factory, TestRedis.PREFIX, false);

	final RedisLockProvider otherProvider = new RedisLockProvider(this.otherFactory, TestRedis.PREFIX, false);

	RedisProviderPair() {
		TestRedis.awaitAnswers(this.provider);
		TestRedis.awaitAnswers(this.otherProvider);
	}

	LettuceConnectionFactory factory() {
		return this.factory;
	}

	@Override
	public void close() {
		this.provider.close();
		this.otherProvider.close();
		this.factory.destroy();
		this.otherFactory.destroy();
	}

}
