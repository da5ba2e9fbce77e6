package dev.distlock.autoconfigure.aot;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;

/**
 * An application on the in-memory store, processed ahead of time and started in AOT mode,
 * locks through annotated methods with a named option set and every annotation attribute.
 */
@CompileWithForkedClassLoader
class InMemoryAotTests {

	@Test
	void annotatedMethodsLockInAotMode() {
		AheadOfTime.run(App.class, AheadOfTime.with(AotServices.STOCK, "distributed-lock.store=in-memory"),
				(context) -> {
					AotServices.locksThroughANamedSet(context);
					AotServices.locksTheFamily(context);
					AotServices.locksSeveralKeys(context);
				});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

		@Bean
		AotServices.Orders orders() {
			return new AotServices.Orders();
		}

		@Bean
		AotServices.Catalog catalog() {
			return new AotServices.Catalog();
		}

		@Bean
		AotServices.Transfers transfers() {
			return new AotServices.Transfers();
		}

	}

}
