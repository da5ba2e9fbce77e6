package dev.distlock.autoconfigure.aot;

import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application on the Redis store (a real {@code redis-server}), processed ahead of
 * time and started in AOT mode, locks through annotated methods with a named option set
 * and every annotation attribute.
 */
@CompileWithForkedClassLoader
@Tag("server")
class RedisAotTests {

	@Test
	void annotatedMethodsLockInRedisInAotMode() {
		RedisServer redis = RedisServer.shared();
		AheadOfTime.run(App.class,
				AheadOfTime.with(AotServices.STOCK, "distributed-lock.store=redis", "spring.data.redis.host=127.0.0.1",
						"spring.data.redis.port=" + redis.port(), "distributed-lock.redis.key-prefix=aot:"),
				(context) -> {
					assertThat(context.getBean(AotServices.Orders.class)
						.ship("in-redis", () -> redis.command("PTTL", "aot:stock:in-redis")))
						.as("the key's time to live in Redis, from the option set's 7 s lease")
						.matches((reply) -> {
							long millis = Long.parseLong(reply.substring(1));
							return millis > 0 && millis <= 7000;
						});
					AotServices.locksThroughANamedSet(context);
					AotServices.locksTheFamily(context);
					AotServices.locksSeveralKeys(context);
				});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(exclude = DataSourceAutoConfiguration.class)
	@Import({ AotServices.Orders.class, AotServices.Catalog.class, AotServices.Transfers.class })
	static class App {

	}

}
