package dev.distlock.fuzz;

import java.util.concurrent.TimeUnit;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractHolderKilledTests;
import dev.distlock.redis.RedisProviderFactory;
import dev.distlock.redis.RedisStoreFixture;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.Tag;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A Redis lock's holder JVM killed with SIGKILL frees the lock when its lease runs out,
 * and not before; the next holder gets a greater fencing token. See
 * {@link AbstractHolderKilledTests}; here the holder's renewal is seen in Redis itself.
 */
@Tag("server")
class HolderKilledTests extends AbstractHolderKilledTests {

	@Override
	protected StoreFixture startStore() {
		return new RedisStoreFixture();
	}

	/**
	 * The holder renews (it is the only client running scripts so far), so only the kill
	 * can free it.
	 */
	@Override
	protected void awaitRenewal(StoreFixture store, DefaultLockTemplate contender, long heldAt) {
		LettuceConnectionFactory connectionFactory = TestRedis
			.connectionFactory(Integer.parseInt(store.settings().get(RedisProviderFactory.PORT)));
		try {
			StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
			long scriptsSoFar = TestRedis.scriptCalls(redis);
			await().atMost(LEASE).until(() -> TestRedis.scriptCalls(redis) > scriptsSoFar);
			assertThat(ttlMillis(redis)).isPositive();
		}
		finally {
			connectionFactory.destroy();
		}
	}

	private static long ttlMillis(StringRedisTemplate redis) {
		Long ttl = redis.getExpire(TestRedis.PREFIX + KEY, TimeUnit.MILLISECONDS);
		return (ttl != null) ? ttl : -2;
	}

}
