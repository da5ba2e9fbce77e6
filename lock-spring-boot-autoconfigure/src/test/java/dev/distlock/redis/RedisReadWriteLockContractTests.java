package dev.distlock.redis;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.SharedLocking;
import dev.distlock.testsupport.AbstractReadWriteLockContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read-write lock contract on a real {@code redis-server}, plus the shape of the
 * readers' hash: read holds expire on the server's clock. The two providers use separate
 * connection factories, as two JVMs would.
 */
class RedisReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static RedisProviderPair pair;

	private static RedisLockProvider provider;

	private static RedisLockProvider otherProvider;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect() {
		pair = new RedisProviderPair();
		provider = pair.provider;
		otherProvider = pair.otherProvider;
		redis = new StringRedisTemplate(pair.factory());
	}

	@AfterAll
	static void disconnect() {
		pair.close();
	}

	@Override
	protected SharedLocking provider() {
		return provider;
	}

	@Override
	protected SharedLocking otherProvider() {
		return otherProvider;
	}

	/**
	 * Each reader's expiry is the server's clock plus its lease, in ms: compared here
	 * with the server's {@code TIME}, never this JVM's clock.
	 */
	@Test
	void readersAreAHashOfOwnerToExpiryOnTheServersClockAndFence() {
		String key = "rw-shape-" + UUID.randomUUID();
		LockHandle reader = ((LockAttempt.Acquired) provider.tryLockShared(key, Duration.ofSeconds(10), false))
			.handle();
		assertThat(redis.type("lock:" + key)).isEqualTo(DataType.HASH);
		var fields = redis.<String, String>opsForHash().entries("lock:" + key);
		assertThat(fields).hasSize(1);
		String value = fields.values().iterator().next();
		assertThat(value).matches("\\d+ " + reader.fencingToken());
		long expiry = Long.parseLong(value.split(" ")[0]);
		long serverNow = redis.execute(
				(org.springframework.data.redis.core.RedisCallback<Long>) (connection) -> connection.serverCommands()
					.time());
		assertThat(expiry - serverNow).isBetween(9_000L, 10_000L);
		assertThat(redis.getExpire("lock:" + key)).isBetween(1L, 10L);
		assertThat(reader.release()).isTrue();
		assertThat(redis.hasKey("lock:" + key)).as("the last reader's release deletes the hash").isFalse();
	}

}
