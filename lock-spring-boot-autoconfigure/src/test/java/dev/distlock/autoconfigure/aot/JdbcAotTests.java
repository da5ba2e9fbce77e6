package dev.distlock.autoconfigure.aot;

import java.util.UUID;

import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application on the JDBC store (a real PostgreSQL server), processed ahead of time
 * and started in AOT mode, locks through annotated methods with a named option set and
 * the annotation attributes this store supports (it has no read locks, semaphores,
 * multi-key or fair locks).
 */
@CompileWithForkedClassLoader
@Tag("server")
class JdbcAotTests {

	@Test
	void annotatedMethodsLockInPostgresqlInAotMode() {
		PostgresServer postgres = PostgresServer.shared();
		String table = "aot_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		AheadOfTime.run(App.class, AheadOfTime.with(AotServices.STOCK, "distributed-lock.store=jdbc",
				"spring.datasource.url=" + postgres.jdbcUrl(), "spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + postgres.password(), "distributed-lock.jdbc.initialize-schema=always",
				"distributed-lock.jdbc.table-name=" + table), (context) -> {
					JdbcTemplate jdbc = new JdbcTemplate(postgres.dataSource());
					assertThat(context.getBean(AotServices.Orders.class)
						.ship("in-postgres",
								() -> jdbc.queryForObject(
										"SELECT owner FROM " + table + " WHERE name = 'stock:in-postgres'",
										String.class)))
						.as("the row's owner while the method runs")
						.isNotNull();
					AotServices.locksThroughANamedSet(context);
				});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(AotServices.Orders.class)
	static class App {

	}

}
