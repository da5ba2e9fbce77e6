package dev.distlock.autoconfigure.aot;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;

/**
 * An application on the in-memory store, processed ahead of time and started in AOT mode,
 * locks through annotated methods with a named option set and every annotation attribute.
 */
@CompileWithForkedClassLoader
@Tag("slow")
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
	@EnableAutoConfiguration(exclude = DataSourceAutoConfiguration.class)
	@Import({ AotServices.Orders.class, AotServices.Catalog.class, AotServices.Transfers.class })
	static class App {

	}

}
