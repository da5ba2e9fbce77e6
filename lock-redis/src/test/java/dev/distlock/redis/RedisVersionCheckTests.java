package dev.distlock.redis;

import java.time.Duration;

import dev.distlock.LockBackendException;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.harness.redis.RedisVersion;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis older than 6.2 cannot run distlock's scripts ({@code SET ... GET}); every lock
 * call says so, naming the server's version, instead of a script's syntax error, and
 * nothing is left in Redis. A real Redis 2.8 (the oldest bundled in a Maven artifact),
 * with the client's default settings.
 */
@Tag("server")
class RedisVersionCheckTests {

	@Test
	void aServerOlderThanRedis62IsRefusedNamingItsVersion() {
		try (RedisServer old = RedisServer.start(RedisVersion.V2_8)) {
			assertThat(old.version()).startsWith("2.8.");
			LettuceConnectionFactory factory = StoreUnavailableTests.defaultClient(old.port());
			try (RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false)) {
				for (int call = 0; call < 2; call++) {
					assertThatExceptionOfType(LockBackendException.class)
						.isThrownBy(() -> LockAttempt
							.join(provider.tryLock(LockRequest.exclusive("old-server", Duration.ofSeconds(10)))))
						.withMessageContaining("needs Redis 6.2 or newer")
						.withMessageContaining("Redis " + old.version())
						.withMessageContaining("old-server");
				}
				assertThat(old.command("DBSIZE")).isEqualTo(":0");
			}
			finally {
				factory.destroy();
			}
		}
	}

}
