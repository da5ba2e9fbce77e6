package dev.distlock.sample.redis;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.distlock.sample.SampleProperties;
import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Lets the sample run with nothing installed: when no {@code spring.data.redis.*}
 * connection is configured, it points the application at
 * 127.0.0.1:{@code sample.embedded-redis.port} (default 6399), starting a real
 * redis-server there unless one already answers, which is how a second instance shares
 * the first one's Redis. With a connection configured it starts nothing and changes
 * nothing.
 *
 * <p>
 * An environment post-processor rather than a bean, because the Redis connection
 * properties must be settled before Spring Boot's Redis auto-configuration reads them.
 * Registered in {@code META-INF/spring.factories}; runs after the configuration files
 * have been loaded.
 */
public class EmbeddedRedisEnvironmentPostProcessor implements EnvironmentPostProcessor {

	/** The property source this adds. */
	public static final String PROPERTY_SOURCE_NAME = "sampleEmbeddedRedis";

	/**
	 * Set to {@code started} or {@code shared} in the added property source, for logs and
	 * tests.
	 */
	public static final String ORIGIN_PROPERTY = "sample.embedded-redis.origin";

	/**
	 * Any of these means the user chose a Redis; Spring Boot's client settings stay
	 * untouched then.
	 */
	private static final List<String> CONNECTION_PROPERTIES = List.of("spring.data.redis.url", "spring.data.redis.host",
			"spring.data.redis.port", "spring.data.redis.sentinel.nodes", "spring.data.redis.cluster.nodes");

	private final Log logger;

	public EmbeddedRedisEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(EmbeddedRedisEnvironmentPostProcessor.class);
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		for (String property : CONNECTION_PROPERTIES) {
			if (environment.containsProperty(property)) {
				this.logger.info("Using the configured Redis (" + property + "=" + environment.getProperty(property)
						+ "); no redis-server started");
				return;
			}
		}
		SampleProperties.EmbeddedRedis settings = Binder.get(environment)
			.bindOrCreate("sample.embedded-redis", SampleProperties.EmbeddedRedis.class);
		if (!settings.enabled()) {
			this.logger.info("No Redis configured and sample.embedded-redis.enabled=false: using Spring Boot's "
					+ "default Redis connection");
			return;
		}
		int port = settings.port();
		SampleRedisServer.Origin origin = SampleRedisServer.ensureRunning(port);
		environment.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of("spring.data.redis.host", "127.0.0.1",
					"spring.data.redis.port", port, ORIGIN_PROPERTY, origin.name().toLowerCase(Locale.ROOT))));
		if (origin == SampleRedisServer.Origin.STARTED) {
			this.logger.info("No Redis configured: started redis-server on 127.0.0.1:" + port
					+ "; it stops when this instance exits (instances started later share it)");
		}
		else {
			this.logger.info("No Redis configured: sharing the Redis already running on 127.0.0.1:" + port);
		}
	}

}
