package dev.distlock.autoconfigure.jdbc;

import java.util.UUID;

import javax.sql.DataSource;

import dev.distlock.StaleTokenException;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.jdbc.JdbcFence;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The JDBC fence's auto-configuration on a real PostgreSQL server, with Boot's own
 * DataSource auto-configuration.
 */
@Tag("server")
class DistributedLockJdbcFenceAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DistributedLockJdbcFenceAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + PostgresServer.shared().jdbcUrl(),
				"spring.datasource.username=" + PostgresServer.shared().username(),
				"spring.datasource.password=" + PostgresServer.shared().password());

	private static String table() {
		return "fence_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
	}

	@Test
	void createsTheFenceTableWhenAskedAndRefusesAStaleToken() {
		String table = table();
		this.runner
			.withPropertyValues("distributed-lock.fence.jdbc.initialize-schema=always",
					"distributed-lock.fence.jdbc.table-name=" + table)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(JdbcFence.class);
				JdbcFence fence = context.getBean(JdbcFence.class);
				assertThat(fence.tableName()).isEqualTo(table);
				TransactionTemplate transactions = new TransactionTemplate(
						new DataSourceTransactionManager(context.getBean(DataSource.class)));
				transactions.executeWithoutResult((status) -> fence.check("autoconfig", 5));
				assertThatExceptionOfType(StaleTokenException.class)
					.isThrownBy(() -> transactions.executeWithoutResult((status) -> fence.check("autoconfig", 4)));
			});
	}

	@Test
	void backsOffForTheApplicationsOwnFence() {
		this.runner
			.withBean("myFence", JdbcFence.class,
					() -> JdbcFence.builder(PostgresServer.shared().dataSource()).tableName("my_fence").build())
			.run((context) -> assertThat(context).hasSingleBean(JdbcFence.class)
				.getBean(JdbcFence.class)
				.extracting(JdbcFence::tableName)
				.isEqualTo("my_fence"));
	}

	@Test
	void isOffWithDistributedLockDisabled() {
		this.runner.withPropertyValues("distributed-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(JdbcFence.class));
	}

	@Test
	void aBadTableNameStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.fence.jdbc.table-name=no-dashes")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.fence.jdbc.table-name"));
	}

}
