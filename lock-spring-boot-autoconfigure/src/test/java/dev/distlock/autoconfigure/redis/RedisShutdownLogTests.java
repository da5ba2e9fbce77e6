package dev.distlock.autoconfigure.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot application with the Redis store, against a real {@code redis-server},
 * shuts down without a warning or an error from distlock, Lettuce, netty or Spring Data
 * Redis: right after startup, after taking a lock, while a waiter's release subscription
 * starts and once it is up; with the connection factory's default (unpooled) and pooled
 * connections.
 */
@ExtendWith(OutputCaptureExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class RedisShutdownLogTests {

	private static final List<String> LOGGERS = List.of("dev.distlock", "io.lettuce", "io.netty",
			"org.springframework.data.redis");

	private static RedisServer redis;

	@BeforeAll
	static void startRedis() {
		redis = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		redis.close();
	}

	@ParameterizedTest(name = "pooled connections: {0}")
	@ValueSource(booleans = { false, true })
	void rightAfterStartup(boolean pooled, CapturedOutput output) {
		start(pooled).close();
		assertNoWarningOrError(output);
	}

	@ParameterizedTest(name = "pooled connections: {0}")
	@ValueSource(booleans = { false, true })
	void afterTakingALock(boolean pooled, CapturedOutput output) {
		try (ConfigurableApplicationContext context = start(pooled)) {
			context.getBean(LockTemplate.class).run("shutdown-" + UUID.randomUUID(), () -> {
			});
		}
		assertNoWarningOrError(output);
	}

	/**
	 * An application that stops while its first waiter's release subscription is being
	 * set up, as one that exits right after startup can: the waiter waits for a lock that
	 * another instance holds, so the application itself holds none when it stops.
	 */
	@ParameterizedTest(name = "pooled connections: {0}")
	@ValueSource(booleans = { false, true })
	void whileTheReleaseSubscriptionStarts(boolean pooled, CapturedOutput output) {
		String key = "shutdown-" + UUID.randomUUID();
		LettuceConnectionFactory otherFactory = TestRedis.connectionFactory(redis);
		try (RedisLockProvider other = new RedisLockProvider(otherFactory, TestRedis.PREFIX, false)) {
			TestRedis.awaitAnswers(other);
			assertThat(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)))))
				.isInstanceOf(LockAttempt.Acquired.class);
			try (ConfigurableApplicationContext context = start(pooled)) {
				LockTemplate template = context.getBean(LockTemplate.class);
				Thread waiter = new Thread(() -> template.tryAcquire(key, LockOptions.defaults()), "shutdown-waiter");
				waiter.setDaemon(true);
				waiter.start();
				Conditions.await("a waiter subscribed", Duration.ofSeconds(20),
						() -> provider(context).subscribedKeys() > 0);
			}
		}
		finally {
			otherFactory.destroy();
		}
		assertNoWarningOrError(output);
	}

	@ParameterizedTest(name = "pooled connections: {0}")
	@ValueSource(booleans = { false, true })
	void withTheReleaseSubscriptionUp(boolean pooled, CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = start(pooled)) {
			LockTemplate template = context.getBean(LockTemplate.class);
			String key = "shutdown-" + UUID.randomUUID();
			Lease held = template.acquire(key, LockOptions.defaults());
			FutureTask<Void> waiter = new FutureTask<>(
					() -> template.tryAcquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(30)).build())
						.ifPresent(Lease::release),
					null);
			new Thread(waiter, "shutdown-waiter").start();
			Conditions.await("the waiter's release subscription is up", Duration.ofSeconds(20),
					provider(context)::isListening);
			held.release();
			waiter.get(20, TimeUnit.SECONDS);
		}
		assertNoWarningOrError(output);
	}

	/**
	 * A started application whose store answers: its connection comes up in the
	 * background, which on a loaded machine can take longer than a store timeout.
	 */
	private static ConfigurableApplicationContext start(boolean pooled) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties("spring.main.banner-mode=off", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + redis.port(), "spring.data.redis.lettuce.pool.enabled=" + pooled)
			.run();
		TestRedis.awaitAnswers(provider(context));
		return context;
	}

	private static RedisLockProvider provider(ConfigurableApplicationContext context) {
		return (RedisLockProvider) context.getBean(LockProvider.class);
	}

	private static void assertNoWarningOrError(CapturedOutput output) {
		List<String> noisy = output.getAll()
			.lines()
			.filter((line) -> line.contains("WARN") || line.contains("ERROR"))
			.filter((line) -> LOGGERS.stream().anyMatch(line::contains) || line.contains("Exception"))
			.toList();
		assertThat(noisy).as("warnings and errors in the log:%n%s", output.getAll()).isEmpty();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class App {

	}

}
