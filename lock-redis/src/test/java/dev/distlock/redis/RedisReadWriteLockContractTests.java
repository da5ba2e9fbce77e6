package dev.distlock.redis;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.contract.AbstractReadWriteLockContractTests;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.DataType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read-write lock contract on a real {@code redis-server}, plus the shape of the
 * readers' hash: read holds expire on the server's clock. The two providers use separate
 * connection factories, as two JVMs would.
 */
@Tag("server")
class RedisReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	@RegisterExtension
	static final RedisProviderPair pair = new RedisProviderPair();

	@Override
	protected LockProvider provider() {
		return pair.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return pair.otherProvider;
	}

	/**
	 * Each reader's expiry is the server's clock plus its lease, in ms: compared here
	 * with the server's {@code TIME}, never this JVM's clock.
	 */
	@Test
	void readersAreAHashOfOwnerToExpiryOnTheServersClockAndFence() {
		String key = "rw-shape-" + UUID.randomUUID();
		LockHandle reader = ((LockAttempt.Acquired) LockAttempt
			.join(pair.provider.tryLock(LockRequest.shared(key, Duration.ofSeconds(10))))).handle();
		assertThat(pair.redis.type("lock:" + key)).isEqualTo(DataType.HASH);
		var fields = pair.redis.<String, String>opsForHash().entries("lock:" + key);
		assertThat(fields).hasSize(1);
		String value = fields.values().iterator().next();
		assertThat(value).matches("\\d+ " + reader.fencingToken());
		long expiry = Long.parseLong(value.split(" ")[0]);
		long serverNow = pair.redis.execute(
				(org.springframework.data.redis.core.RedisCallback<Long>) (connection) -> connection.serverCommands()
					.time());
		assertThat(expiry - serverNow).isBetween(9_000L, 10_000L);
		assertThat(pair.redis.getExpire("lock:" + key)).isBetween(1L, 10L);
		assertThat(reader.release()).isTrue();
		assertThat(pair.redis.hasKey("lock:" + key)).as("the last reader's release deletes the hash").isFalse();
	}

}
