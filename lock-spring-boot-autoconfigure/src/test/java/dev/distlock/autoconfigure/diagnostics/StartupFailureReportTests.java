package dev.distlock.autoconfigure.diagnostics;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.UUID;

import dev.distlock.DistributedLock;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.autoconfigure.jdbc.DistributedLockJdbcAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * What Spring Boot's "APPLICATION FAILED TO START" report says when distlock stops an
 * application: each case runs a real {@link SpringApplication} and reads the report it
 * prints, so the description and action checked are those of distlock's failure
 * analyzers, not of Boot's generic ones.
 */
@ExtendWith(OutputCaptureExtension.class)
@Tag("server")
class StartupFailureReportTests {

	@Test
	void anUnknownStoreWithTheTemplateInjectedNamesThePropertyItsValuesAndTheStoresOnTheClassPath(
			CapturedOutput output) {
		String report = failureReport(output, NeedsTemplate.class, "distributed-lock.store=mongo");
		assertThat(description(report)).contains("bean of type 'dev.distlock.LockTemplate'")
			.contains("distributed-lock.store is 'mongo', which is not a store");
		assertThat(action(report))
			.contains("Set distributed-lock.store to one of redis, redlock, jdbc, zookeeper," + " in-memory")
			.contains("Stores on the class path: redis (needs a Redis connection (spring.data.redis.*))")
			.contains("in-memory (needs distributed-lock.store=in-memory");
	}

	@Test
	void aStoreWithoutItsConnectionWithTheTemplateInjectedSaysWhatTheStoreNeeds(CapturedOutput output) {
		String report = failureReport(output, NeedsTemplate.class, "distributed-lock.store=jdbc");
		assertThat(description(report))
			.contains("distributed-lock.store is 'jdbc', but the JDBC store is not available: it needs one DataSource");
		assertThat(action(report)).contains("Set distributed-lock.store to one of");
	}

	@Test
	void aStoreThatIsNotAvailableNamesThePropertyAndTheAvailableStores(CapturedOutput output) {
		String report = failureReport(output, InMemoryApp.class, "distributed-lock.store=zookeeper");
		assertThat(description(report))
			.contains("The lock store cannot be chosen: distributed-lock.store is" + " 'zookeeper'")
			.contains("The zookeeper store is not available")
			// no store registers while the property names another, so no list of them
			.doesNotContain("Stores available to this application");
		assertThat(action(report)).contains("Set distributed-lock.store to one of");
	}

	@Test
	void aMissingLockTableNamesTheTableAndTheDdl(CapturedOutput output) {
		String table = "missing_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		String report = failureReport(output, JdbcApp.class, postgres("distributed-lock.jdbc.table-name=" + table));
		assertThat(description(report)).contains("the table '" + table + "' does not exist");
		assertThat(action(report)).contains("Create the table '" + table + "'")
			.contains("classpath:dev/distlock/jdbc/schema-postgresql.sql")
			.contains("distributed-lock.jdbc.initialize-schema=always");
	}

	@Test
	void aNameWithoutAnOptionSetNamesTheMethodAndTheSetsConfigured(CapturedOutput output) {
		String report = failureReport(output, UnknownSetApp.class, "distributed-lock.store=in-memory",
				"distributed-lock.locks.stock.wait-time=2s");
		assertThat(description(report)).contains("UnknownSet.work()")
			.contains("distributed-lock.locks.nope is not configured");
		assertThat(action(report)).contains("Configure the option set under distributed-lock.locks.nope")
			.contains("Option sets configured: stock");
	}

	@Test
	void aFairLockOnAStoreWithoutFairLocksNamesTheMethodTheStoreAndTheCapability(CapturedOutput output) {
		String table = "fair_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		String report = failureReport(output, FairLockApp.class, postgres("distributed-lock.jdbc.table-name=" + table,
				"distributed-lock.jdbc.initialize-schema=always"));
		assertThat(report).doesNotContain("Unexpected AOP exception");
		assertThat(description(report)).contains("Catalog.read()")
			.contains("the jdbc store does not")
			.contains("lock kind FAIR");
		assertThat(action(report)).contains("Lock in a store that offers it");
	}

	@Test
	void anInvalidPropertyNamesItsValueWhereItCameFromAndTheRule(CapturedOutput output) {
		String report = failureReport(output, InMemoryApp.class, "distributed-lock.store=in-memory",
				"distributed-lock.lease-time=0s");
		assertThat(description(report)).contains("for the distlock property 'distributed-lock.lease-time'")
			.contains("commandLineArgs")
			.contains("must be positive");
		assertThat(action(report)).contains("Change distributed-lock.lease-time");
	}

	@Test
	void anUnreachableStoreAtStartupNamesTheStoreAndItsSettings(CapturedOutput output) throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		String report = failureReport(output, LocksAtStartup.class, "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + closedPort, "distributed-lock.store-timeout=1s",
				"distributed-lock.wait-time=0");
		assertThat(description(report)).contains("The redis lock store failed while the application was starting");
		assertThat(action(report)).contains("Check that the redis store is running").contains("spring.data.redis.*");
	}

	private static String[] postgres(String... more) {
		PostgresServer server = PostgresServer.shared();
		String[] properties = new String[more.length + 3];
		properties[0] = "spring.datasource.url=" + server.jdbcUrl();
		properties[1] = "spring.datasource.username=" + server.username();
		properties[2] = "spring.datasource.password=" + server.password();
		System.arraycopy(more, 0, properties, 3, more.length);
		return properties;
	}

	/**
	 * Runs the application, which must fail, and returns the failure report it printed.
	 */
	private static String failureReport(CapturedOutput output, Class<?> application, String... properties) {
		SpringApplication app = new SpringApplication(application);
		app.setWebApplicationType(WebApplicationType.NONE);
		String[] args = new String[properties.length];
		for (int i = 0; i < properties.length; i++) {
			args[i] = "--" + properties[i];
		}
		assertThatException().isThrownBy(() -> app.run(args).close());
		String all = output.getAll();
		int start = all.lastIndexOf("APPLICATION FAILED TO START");
		assertThat(start).as("a failure report in the output").isNotNegative();
		return all.substring(start);
	}

	private static String description(String report) {
		return between(report, "Description:", "Action:");
	}

	private static String action(String report) {
		return between(report, "Action:", "\n\n\n");
	}

	private static String between(String report, String from, String to) {
		int start = report.indexOf(from);
		assertThat(start).as("%s in %s", from, report).isNotNegative();
		int end = report.indexOf(to, start + from.length());
		String part = report.substring(start + from.length(), (end < 0) ? report.length() : end);
		// The report wraps nothing, but a line break may follow a sentence.
		return part.replaceAll("\\s+", " ").trim();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
			DistributedLockInMemoryAutoConfiguration.class, DistributedLockJdbcAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class NeedsTemplate {

		@Bean
		Object lockUser(LockTemplate template) {
			return template;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DistributedLockInMemoryAutoConfiguration.class, DistributedLockAutoConfiguration.class })
	static class InMemoryApp {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DistributedLockJdbcAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class JdbcApp {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DistributedLockInMemoryAutoConfiguration.class, DistributedLockAutoConfiguration.class })
	static class UnknownSetApp {

		@Bean
		UnknownSet unknownSet() {
			return new UnknownSet();
		}

	}

	static class UnknownSet {

		@DistributedLock(key = "#id", name = "nope")
		public void work(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DistributedLockJdbcAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class FairLockApp {

		@Bean
		Catalog catalog() {
			return new Catalog();
		}

	}

	static class FairCatalog {

		@DistributedLock(key = "#id", fair = true)
		public void read(String id) {
		}

	}

	/**
	 * A plain lock here and a fair lock inherited: the proxy meets the plain one first,
	 * and the fair lock's error must come out all the same.
	 */
	static class Catalog extends FairCatalog {

		@DistributedLock(key = "#id")
		public void write(String id) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class LocksAtStartup {

		@Bean
		ApplicationRunner nightlyReport(LockTemplate template) {
			return (args) -> template.run("nightly-report", LockOptions.defaults(), () -> {
			});
		}

	}

}
