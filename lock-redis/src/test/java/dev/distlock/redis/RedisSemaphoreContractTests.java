package dev.distlock.redis;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.contract.AbstractSemaphoreContractTests;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.core.RedisCallback;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The semaphore contract on a real {@code redis-server}, plus the shape of the semaphore:
 * permits scored by their expiry on the server's clock (Redisson #6664's expirable
 * semaphore used client clocks). The two providers use separate connection factories, as
 * two JVMs would.
 */
@Tag("server")
class RedisSemaphoreContractTests extends AbstractSemaphoreContractTests {

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

	@Test
	@DisplayName("Permit expiry is on the server's clock, never a client's (Redisson #6664's expirable semaphore)")
	void permitsExpireOnTheServersClock() {
		String key = "sem-shape-" + UUID.randomUUID();
		String semaphore = pair.provider.keysForTests().permitsKey("lock:" + key);
		LockHandle permit = ((LockAttempt.Acquired) LockAttempt
			.join(pair.provider.tryLock(LockRequest.permit(key, 2, Duration.ofSeconds(10))))).handle();
		assertThat(pair.redis.type(semaphore)).isEqualTo(DataType.ZSET);
		Double score = pair.redis.opsForZSet().score(semaphore, owner(semaphore));
		long serverNow = pair.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		assertThat(score.longValue() - serverNow).isBetween(9_000L, 10_000L);
		assertThat(pair.redis.opsForZSet().score(semaphore, "#n")).isEqualTo(-2.0);
		assertThat(pair.redis.hasKey("lock:" + key)).as("the semaphore is not the lock of the same key").isFalse();
		assertThat(permit.release()).isTrue();
		assertThat(pair.redis.hasKey(semaphore)).as("the last permit's release deletes the semaphore").isFalse();
	}

	private static String owner(String semaphore) {
		return pair.redis.opsForZSet().rangeByScore(semaphore, 0, Double.MAX_VALUE).stream().findFirst().orElseThrow();
	}

}
