package dev.distlock.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The sample's own settings ({@code sample.*}), kept apart from
 * {@code distributed-lock.*} so it is clear which options belong to the library.
 *
 * @param workPause The simulated work between reading the stock and writing it back; long
 * enough that unlocked concurrent orders reliably interleave and oversell.
 * @param embeddedRedis Where the sample starts or finds its own redis-server when no
 * {@code spring.data.redis.*} connection is configured.
 */
@ConfigurationProperties("sample")
public record SampleProperties(@DefaultValue("10ms") Duration workPause, @DefaultValue EmbeddedRedis embeddedRedis) {

	/**
	 * The sample's own redis-server, used only when no {@code spring.data.redis.*}
	 * connection is configured.
	 *
	 * @param enabled Whether to start or share a redis-server at all; when false and
	 * nothing is configured, Spring Boot's default (localhost:6379) applies.
	 * @param port The fixed port: the first instance starts redis-server there, later
	 * ones share it.
	 */
	public record EmbeddedRedis(@DefaultValue("true") boolean enabled, @DefaultValue("6399") int port) {

	}

}
