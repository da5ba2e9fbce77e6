package dev.distlock.sample.redis;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.distlock.harness.redis.RedisServer;
import dev.distlock.sample.SampleApplication;
import dev.distlock.sample.order.OrderService;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample starts its own redis-server only when no Redis is configured, shares one
 * that already answers on its port, and otherwise leaves the connection settings alone.
 * Every case runs against real processes.
 */
@Tag("server")
class EmbeddedRedisEnvironmentPostProcessorTests {

	private final EmbeddedRedisEnvironmentPostProcessor postProcessor = new EmbeddedRedisEnvironmentPostProcessor(
			(log) -> log.get());

	@Test
	void startsRedisWhenNoneIsConfigured() {
		int port = freePort();
		MockEnvironment environment = new MockEnvironment().withProperty("sample.embedded-redis.port", "" + port);
		try {
			postProcess(environment);
			assertThat(environment.getProperty(EmbeddedRedisEnvironmentPostProcessor.ORIGIN_PROPERTY))
				.isEqualTo("started");
			assertThat(environment.getProperty("spring.data.redis.host")).isEqualTo("127.0.0.1");
			assertThat(environment.getProperty("spring.data.redis.port", Integer.class)).isEqualTo(port);
			assertThat(RedisPing.answers(port)).isTrue();
		}
		finally {
			shutdown(port);
		}
	}

	@Test
	void sharesARedisThatAlreadyAnswersOnItsPort() {
		try (RedisServer redis = RedisServer.start()) {
			MockEnvironment environment = new MockEnvironment().withProperty("sample.embedded-redis.port",
					"" + redis.port());
			postProcess(environment);
			assertThat(environment.getProperty(EmbeddedRedisEnvironmentPostProcessor.ORIGIN_PROPERTY))
				.isEqualTo("shared");
			assertThat(environment.getProperty("spring.data.redis.port", Integer.class)).isEqualTo(redis.port());
		}
	}

	@ParameterizedTest
	@CsvSource({ "spring.data.redis.host, 127.0.0.1", "spring.data.redis.port, 6379",
			"spring.data.redis.url, redis://127.0.0.1:6379", "spring.data.redis.cluster.nodes, 127.0.0.1:7000" })
	void startsNothingWhenRedisIsConfigured(String property, String value) {
		int port = freePort();
		MockEnvironment environment = new MockEnvironment().withProperty(property, value)
			.withProperty("sample.embedded-redis.port", "" + port);
		postProcess(environment);
		assertThat(
				environment.getPropertySources().contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME))
			.isFalse();
		assertThat(environment.getProperty(property)).isEqualTo(value);
		assertThat(RedisPing.answers(port)).isFalse();
	}

	@Test
	void startsNothingWhenDisabled() {
		int port = freePort();
		MockEnvironment environment = new MockEnvironment().withProperty("sample.embedded-redis.enabled", "false")
			.withProperty("sample.embedded-redis.port", "" + port);
		postProcess(environment);
		assertThat(environment.containsProperty("spring.data.redis.port")).isFalse();
		assertThat(RedisPing.answers(port)).isFalse();
	}

	@Test
	void applicationWithoutRedisConfigurationRunsOnItsOwnRedis() {
		int port = freePort();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(SampleApplication.class)
			.run("--server.port=0", "--sample.embedded-redis.port=" + port)) {
			assertThat(context.getEnvironment().getProperty(EmbeddedRedisEnvironmentPostProcessor.ORIGIN_PROPERTY))
				.isEqualTo("started");
			assertThat(context.getBean(OrderService.class).restock("book", 2).remaining()).isEqualTo(2);
			assertThat(context.getBean(OrderService.class).placeOrder("book").remaining()).isEqualTo(1);
		}
		finally {
			shutdown(port);
		}
	}

	private void postProcess(MockEnvironment environment) {
		this.postProcessor.postProcessEnvironment(environment, new SpringApplication());
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Stops a redis-server the post-processor started; otherwise it would live until the
	 * JVM exits.
	 */
	private static void shutdown(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
			OutputStream out = socket.getOutputStream();
			out.write("*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n".getBytes(StandardCharsets.US_ASCII));
			out.flush();
			socket.getInputStream().read();
		}
		catch (IOException ex) {
			// not running, or closed the connection while shutting down: either way it is
			// going
		}
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (RedisPing.answers(port) && System.nanoTime() < deadline) {
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
