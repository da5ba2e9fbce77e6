package dev.distlock.autoconfigure.diagnostics;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.autoconfigure.jdbc.DistributedLockJdbcAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.autoconfigure.zookeeper.DistributedLockZookeeperAutoConfiguration;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.harness.redis.RedisServer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator reads in the log of a normal run: one INFO line at startup naming the
 * store and its main settings, and no warning from distlock when the application stops
 * after taking a lock. Each store runs against its real server.
 */
@ExtendWith(OutputCaptureExtension.class)
@Tag("server")
class StartupLogTests {

	/** A warning from any of distlock's loggers, in the pattern {@link #run} sets. */
	private static final Pattern DISTLOCK_WARNING = Pattern.compile("(?m)^WARN dev\\.distlock\\..*$");

	/**
	 * A warning from distlock's loggers other than the Redis store's (whose shutdown is
	 * dealt with apart).
	 */
	private static final Pattern WARNING_BUT_REDIS = Pattern.compile("(?m)^WARN dev\\.distlock\\.(?!redis\\.).*$");

	@Test
	void inMemory(CapturedOutput output) {
		List<String> lines = run(output, DISTLOCK_WARNING, InMemoryApp.class, "distributed-lock.store=in-memory");
		assertThat(lines).singleElement()
			.asString()
			.startsWith("INFO dev.distlock.autoconfigure.")
			.contains("Distributed locks use the in-memory store: a lock excludes callers of this JVM only");
	}

	@Test
	void redis(CapturedOutput output) {
		List<String> lines = run(output, WARNING_BUT_REDIS, RedisApp.class, "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port(), "distributed-lock.redis.key-prefix=orders:",
				// A first connection on a loaded machine may take seconds; the line shows
				// the setting.
				"distributed-lock.store-timeout=20s");
		assertThat(lines).singleElement()
			.asString()
			.contains("Distributed locks use Redis (standalone, key prefix 'orders:', store timeout 20000ms)");
	}

	@Test
	void jdbc(CapturedOutput output) {
		PostgresServer postgres = PostgresServer.shared();
		String table = "logged_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		List<String> lines = run(output, DISTLOCK_WARNING, JdbcApp.class, "spring.datasource.url=" + postgres.jdbcUrl(),
				"spring.datasource.username=" + postgres.username(),
				"spring.datasource.password=" + postgres.password(), "distributed-lock.jdbc.initialize-schema=always",
				"distributed-lock.jdbc.table-name=" + table);
		assertThat(lines).singleElement()
			.asString()
			.contains(
					"Distributed locks use the JDBC store on postgresql (table '" + table + "', store timeout 3000ms)");
	}

	@Test
	void zookeeper(CapturedOutput output) throws Exception {
		System.setProperty("zookeeper.admin.enableServer", "false");
		try (TestingServer server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1,
				Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1"), true)) {
			List<String> lines = run(output, DISTLOCK_WARNING, ZookeeperApp.class,
					"distributed-lock.zookeeper.connect-string=" + server.getConnectString(),
					"distributed-lock.zookeeper.base-path=/logged");
			assertThat(lines).singleElement()
				.asString()
				.contains("Distributed locks use ZooKeeper at " + server.getConnectString()
						+ " (base path '/logged', store timeout 3000ms)");
		}
	}

	/**
	 * Starts the application, takes and releases a lock, stops it; returns distlock's
	 * startup lines, after checking that distlock logged no warning.
	 */
	private static List<String> run(CapturedOutput output, Pattern warnings, Class<?> application,
			String... properties) {
		SpringApplication app = new SpringApplication(application);
		app.setWebApplicationType(WebApplicationType.NONE);
		String[] args = new String[properties.length + 1];
		for (int i = 0; i < properties.length; i++) {
			args[i] = "--" + properties[i];
		}
		// Whole logger names, so that a warning is told by its logger.
		args[properties.length] = "--logging.pattern.console=%level %logger : %message%n";
		int from = output.getAll().length();
		try (ConfigurableApplicationContext context = app.run(args)) {
			context.getBean(LockTemplate.class).run("logged", LockOptions.defaults(), () -> {
			});
		}
		String logged = output.getAll().substring(from);
		assertThat(warnings.matcher(logged).results().map((match) -> match.group()).toList())
			.as("warnings from distlock over a normal run")
			.isEmpty();
		return logged.lines().filter((line) -> line.contains("Distributed locks use")).toList();
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DistributedLockInMemoryAutoConfiguration.class, DistributedLockAutoConfiguration.class })
	static class InMemoryApp {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class RedisApp {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DistributedLockJdbcAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class JdbcApp {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DistributedLockZookeeperAutoConfiguration.class,
			DistributedLockAutoConfiguration.class })
	static class ZookeeperApp {

	}

}
