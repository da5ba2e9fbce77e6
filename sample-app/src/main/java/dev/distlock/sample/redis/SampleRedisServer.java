package dev.distlock.sample.redis;

import dev.distlock.harness.redis.RedisServer;

import org.springframework.boot.SpringApplication;

/**
 * The redis-server the sample uses when none is configured, on a fixed port so that a
 * second instance finds and shares the first one's. A server this JVM starts is stopped
 * when the JVM exits, after the application contexts have closed (a Spring Boot shutdown
 * handler); instances sharing it lose their Redis then, which is acceptable for a demo
 * and is logged at startup.
 */
final class SampleRedisServer {

	private SampleRedisServer() {
	}

	/**
	 * Makes sure a Redis answers on 127.0.0.1:{@code port}: shares one that already does,
	 * otherwise starts one.
	 * @return how the server came to be there
	 * @throws IllegalStateException if the port is taken by something that is not a
	 * Redis, or the server would not start
	 */
	static synchronized Origin ensureRunning(int port) {
		if (RedisPing.answers(port)) {
			return Origin.SHARED;
		}
		RedisServer server;
		try {
			server = RedisServer.startOn(port);
		}
		catch (RuntimeException ex) {
			if (RedisPing.answers(port)) {
				return Origin.SHARED;
			}
			throw new IllegalStateException("Could not start redis-server on 127.0.0.1:" + port
					+ "; configure spring.data.redis.host/port to use another Redis, or pick another port with "
					+ "sample.embedded-redis.port", ex);
		}
		SpringApplication.getShutdownHandlers().add(server::close);
		return Origin.STARTED;
	}

	/** Whether this JVM started the server or found one already running. */
	enum Origin {

		/** This JVM started redis-server and stops it when it exits. */
		STARTED,

		/**
		 * A Redis was already answering (typically the first instance's); this JVM only
		 * connects to it.
		 */
		SHARED

	}

}
