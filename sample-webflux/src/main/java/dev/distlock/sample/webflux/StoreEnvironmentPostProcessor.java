package dev.distlock.sample.webflux;

import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Lets the sample start with nothing installed: when no {@code spring.data.redis.*}
 * connection is configured, the stock and the locks default to this JVM's memory
 * ({@code sample.store=in-memory}, {@code distributed-lock.store=in-memory}). Such an
 * instance shares nothing with another one; point every instance at the same Redis to see
 * the lock work across them.
 *
 * <p>
 * The defaults go last, so a {@code sample.store} or {@code distributed-lock.store} set
 * anywhere else wins. An environment post-processor rather than a bean, because
 * distlock's store selection reads {@code distributed-lock.store} while the context is
 * being built. Registered in {@code META-INF/spring.factories}.
 */
public class StoreEnvironmentPostProcessor implements EnvironmentPostProcessor {

	/** The property source this adds. */
	public static final String PROPERTY_SOURCE_NAME = "sampleInMemoryStore";

	/** Any of these means the user chose a Redis. */
	private static final List<String> CONNECTION_PROPERTIES = List.of("spring.data.redis.url", "spring.data.redis.host",
			"spring.data.redis.port", "spring.data.redis.sentinel.nodes", "spring.data.redis.cluster.nodes");

	private final Log logger;

	public StoreEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(StoreEnvironmentPostProcessor.class);
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		for (String property : CONNECTION_PROPERTIES) {
			if (environment.containsProperty(property)) {
				return;
			}
		}
		environment.getPropertySources()
			.addLast(new MapPropertySource(PROPERTY_SOURCE_NAME,
					Map.of("sample.store", "in-memory", "distributed-lock.store", "in-memory")));
		this.logger.info("No Redis configured (spring.data.redis.*): stock and locks default to this JVM's memory;"
				+ " give every instance the same Redis to share them");
	}

}
