package dev.distlock.bench;

import dev.distlock.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Scenario S7: the starter as an application has it, for {@code @DistributedLock} against
 * {@code LockTemplate}.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class,
		DistributedLockRedisAutoConfiguration.class })
public class AnnotatedApp {

	static ConfigurableApplicationContext start(int port) {
		return new SpringApplicationBuilder(AnnotatedApp.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.main.banner-mode=off", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + port)
			.run();
	}

	@Bean
	Work work() {
		return new Work();
	}

	/** An empty critical section behind the annotation. */
	public static class Work {

		@DistributedLock(key = "#key")
		public void run(String key) {
		}

	}

}
