package dev.distlock.shedlock;

import java.time.Duration;
import java.util.UUID;

import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShedLock's own published suites ({@code shedlock-test-support}: every test of
 * {@code AbstractLockProviderIntegrationTest} and
 * {@code AbstractExtensibleLockProviderIntegrationTest}, whose {@code fuzzTestShouldPass}
 * runs {@code FuzzTester}) against the bridge on a real {@code redis-server}. A lock is
 * there when its key exists in Redis.
 */
@Tag("server")
class RedisShedLockSuiteTests extends AbstractExtensibleLockProviderIntegrationTest {

	private static final String PREFIX = "shedlock-suite:";

	private static RedisServer server;

	private static LettuceConnectionFactory connectionFactory;

	private static DistlockShedLockProvider provider;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
		connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		RedisLockProvider store = new RedisLockProvider(connectionFactory, PREFIX, false);
		// A cold connection on a loaded machine can take longer than one store timeout.
		Conditions.await("Redis answers", Duration.ofSeconds(30), () -> {
			try {
				LockAttempt
					.join(store.tryLock(LockRequest.exclusive("warm-up-" + UUID.randomUUID(), Duration.ofMillis(1))));
				return true;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
		provider = new DistlockShedLockProvider(store);
	}

	@AfterAll
	static void stopRedis() {
		connectionFactory.destroy();
		server.close();
	}

	@Override
	protected ExtensibleLockProvider getLockProvider() {
		return provider;
	}

	@Override
	protected void assertUnlocked(String lockName) {
		assertThat(server.command("EXISTS", PREFIX + lockName)).as("lock %s in Redis", lockName).isEqualTo(":0");
	}

	@Override
	protected void assertLocked(String lockName) {
		assertThat(server.command("EXISTS", PREFIX + lockName)).as("lock %s in Redis", lockName).isEqualTo(":1");
	}

}
