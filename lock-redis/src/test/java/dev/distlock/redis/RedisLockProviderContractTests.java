package dev.distlock.redis;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.LockBackendException;
import dev.distlock.contract.AbstractLockProviderContractTests;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.data.redis.connection.DataType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The provider contract on a real {@code redis-server}, plus what is particular to Redis:
 * the shape of the lock key, fencing tokens that keep rising when the counter is lost,
 * and errors when the server is gone. The two providers use separate connection
 * factories, as two JVMs would.
 */
@Tag("server")
class RedisLockProviderContractTests extends AbstractLockProviderContractTests {

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
	void aLockIsAStringOfOwnerAndFenceWithTheLeaseAsItsTtl() {
		String key = "shape-" + UUID.randomUUID();
		LockHandle handle = acquired(
				LockAttempt.join(pair.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))));
		assertThat(pair.redis.type("lock:" + key)).isEqualTo(DataType.STRING);
		assertThat(pair.redis.opsForValue().get("lock:" + key)).matches("[0-9a-f-]{36}:\\d+ " + handle.fencingToken());
		assertThat(pair.redis.getExpire("lock:" + key)).isBetween(1L, 10L);
		assertThat(handle.release()).isTrue();
		assertThat(pair.redis.hasKey("lock:" + key)).isFalse();
	}

	@Test
	void ownersDifferPerAcquisitionAndPerProvider() {
		String key = "owners-" + UUID.randomUUID();
		LockHandle first = acquired(
				LockAttempt.join(pair.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))));
		Object firstOwner = TestRedis.mutexOwner(pair.redis, "lock:" + key);
		first.release();
		LockHandle second = acquired(
				LockAttempt.join(pair.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))));
		Object secondOwner = TestRedis.mutexOwner(pair.redis, "lock:" + key);
		second.release();
		acquired(LockAttempt.join(pair.otherProvider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))))
			.release();
		assertThat(secondOwner).isNotEqualTo(firstOwner);
		assertThat(((String) secondOwner).split(":")[0]).isEqualTo(((String) firstOwner).split(":")[0]);
	}

	@Test
	void fencingTokensKeepRisingWhenTheCounterIsLost() {
		String key = "fence-" + UUID.randomUUID();
		LockHandle before = acquired(
				LockAttempt.join(pair.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))));
		before.release();
		pair.redis.delete("lock:");
		LockHandle after = acquired(
				LockAttempt.join(pair.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(10)))));
		after.release();
		assertThat(after.fencingToken()).isGreaterThan(before.fencingToken());
	}

	@Test
	void everyOperationReportsAnUnreachableServer() {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory doomed = TestRedis.connectionFactory(server, Duration.ofMillis(500));
			try {
				RedisLockProvider doomedProvider = new RedisLockProvider(doomed, "lock:", false);
				LockHandle handle = acquired(LockAttempt
					.join(doomedProvider.tryLock(LockRequest.exclusive("gone", Duration.ofSeconds(10)))));
				server.kill();
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt
						.join(doomedProvider.tryLock(LockRequest.exclusive("gone-too", Duration.ofSeconds(10)))))
					.withMessageContaining("gone-too")
					.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo("gone-too"));
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> handle.renew(Duration.ofSeconds(10)))
					.withMessageContaining("renew");
				assertThatExceptionOfType(LockBackendException.class).isThrownBy(handle::release)
					.withMessageContaining("release");
			}
			finally {
				doomed.destroy();
			}
		}
	}

}
