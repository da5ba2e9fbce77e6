package dev.distlock.sample.demo;

import dev.distlock.harness.redis.RedisServer;
import dev.distlock.sample.SampleApplication;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One sample instance on a free port with a {@code redis-server} of its own, for the demo
 * page's tests.
 */
final class RunningSample implements AutoCloseable {

	private final RedisServer redis;

	private final ConfigurableApplicationContext app;

	RunningSample() {
		this.redis = RedisServer.start();
		try {
			this.app = new SpringApplicationBuilder(SampleApplication.class).run("--server.port=0",
					"--spring.data.redis.host=" + this.redis.host(), "--spring.data.redis.port=" + this.redis.port());
		}
		catch (RuntimeException ex) {
			this.redis.close();
			throw ex;
		}
	}

	/**
	 * The instance's base URL on the loopback, such as {@code http://127.0.0.1:41234}.
	 */
	String baseUrl() {
		return "http://127.0.0.1:" + this.app.getEnvironment().getProperty("local.server.port");
	}

	@Override
	public void close() {
		this.app.close();
		this.redis.close();
	}

}
