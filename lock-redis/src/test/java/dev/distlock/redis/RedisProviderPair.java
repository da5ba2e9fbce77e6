package dev.distlock.redis;

import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Two providers on the shared test {@code redis-server}, each with its own connection
 * factory, as two JVMs would have: what the contract suites run on. A test class
 * registers one ({@code @RegisterExtension static final RedisProviderPair pair = new
 * RedisProviderPair();}); it connects before the class's first test, once both providers
 * answer, and closes after its last.
 */
final class RedisProviderPair implements BeforeAllCallback, AfterAllCallback {

	private LettuceConnectionFactory factory;

	private LettuceConnectionFactory otherFactory;

	/** The first provider. */
	RedisLockProvider provider;

	/** The second provider, with connections of its own. */
	RedisLockProvider otherProvider;

	/** Plain commands, on the first provider's connections. */
	StringRedisTemplate redis;

	@Override
	public void beforeAll(ExtensionContext context) {
		this.factory = TestRedis.connectionFactory(RedisServer.shared());
		this.otherFactory = TestRedis.connectionFactory(RedisServer.shared());
		this.provider = new RedisLockProvider(this.factory, TestRedis.PREFIX, false);
		this.otherProvider = new RedisLockProvider(this.otherFactory, TestRedis.PREFIX, false);
		this.redis = new StringRedisTemplate(this.factory);
		TestRedis.awaitAnswers(this.provider);
		TestRedis.awaitAnswers(this.otherProvider);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		this.provider.close();
		this.otherProvider.close();
		this.factory.destroy();
		this.otherFactory.destroy();
	}

}
