package dev.distlock.autoconfigure.jdbc;

import java.util.UUID;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.redis.RedisLockProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JDBC store's auto-configuration on a real PostgreSQL server, with Boot's own
 * DataSource auto-configuration (Hikari, default settings).
 */
@Tag("server")
class DistributedLockJdbcAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DistributedLockJdbcAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + PostgresServer.shared().jdbcUrl(),
				"spring.datasource.username=" + PostgresServer.shared().username(),
				"spring.datasource.password=" + PostgresServer.shared().password());

	private static String table() {
		return "autoconfig_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
	}

	@Test
	void createsTheTableWhenAskedAndLocksInIt() {
		String table = table();
		this.runner
			.withPropertyValues("distributed-lock.jdbc.initialize-schema=always",
					"distributed-lock.jdbc.table-name=" + table)
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(JdbcLockProvider.class);
				assertThat(context.getBean(JdbcLockProvider.class).tableName()).isEqualTo(table);
				LockTemplate template = context.getBean(LockTemplate.class);
				try (Lease lease = template.acquire("autoconfig-jdbc", LockOptions.defaults())) {
					assertThat(lease.isHeld()).isTrue();
					assertThat(new JdbcTemplate(context.getBean(javax.sql.DataSource.class))
						.queryForObject("SELECT owner FROM " + table + " WHERE name = 'autoconfig-jdbc'", String.class))
						.isNotNull();
				}
			});
	}

	@Test
	void aMissingTableStopsStartupNamingItAndTheDdl() {
		String table = table();
		this.runner.withPropertyValues("distributed-lock.jdbc.table-name=" + table)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("the table '" + table + "' does not exist")
				.hasMessageContaining("classpath:dev/distlock/jdbc/schema-postgresql.sql")
				.hasMessageContaining("distributed-lock.jdbc.initialize-schema=always"));
	}

	@Test
	void aMissingColumnStopsStartupNamingIt() {
		String table = table();
		new JdbcTemplate(PostgresServer.shared().dataSource())
			.execute("CREATE TABLE " + table + " (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(64), fence BIGINT)");
		this.runner.withPropertyValues("distributed-lock.jdbc.table-name=" + table)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("lacks the column(s) expires_at, waited"));
	}

	/**
	 * A lock table made before read-write locks existed, without their two tables, stops
	 * startup naming the missing one; creating the tables at startup adds both and keeps
	 * the lock table.
	 */
	@Test
	void aMissingReadWriteLockTableStopsStartupNamingIt() {
		String table = table();
		new JdbcTemplate(PostgresServer.shared().dataSource()).execute(
				"CREATE TABLE " + table + " (name VARCHAR(255) PRIMARY KEY, owner VARCHAR(64), fence BIGINT NOT NULL,"
						+ " expires_at TIMESTAMPTZ(6) NOT NULL, waited BOOLEAN NOT NULL DEFAULT FALSE)");
		this.runner.withPropertyValues("distributed-lock.jdbc.table-name=" + table)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("the table '" + table + "_reader'")
				.hasMessageContaining("read-write locks")
				.hasMessageContaining("distributed-lock.jdbc.initialize-schema=always"));
		this.runner
			.withPropertyValues("distributed-lock.jdbc.table-name=" + table,
					"distributed-lock.jdbc.initialize-schema=always")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				LockTemplate template = context.getBean(LockTemplate.class);
				try (Lease lease = template.acquire("autoconfig-read",
						LockOptions.builder().mode(dev.distlock.LockMode.READ).build())) {
					assertThat(lease.isHeld()).isTrue();
				}
			});
	}

	@Test
	void aTableNameThatIsNoIdentifierStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.jdbc.table-name=locks; DROP TABLE x")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.jdbc.table-name"));
	}

	@Test
	void aSweepAgeUnderASecondStopsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.jdbc.sweep-after=10ms")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.jdbc.sweep-after"));
	}

	private ApplicationContextRunner withRedisToo() {
		return this.runner
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DistributedLockRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + RedisServer.shared().port(),
					"distributed-lock.jdbc.initialize-schema=always");
	}

	@Test
	void withRedisTooAndNoStorePropertyStartupFailsNamingTheProperty() {
		withRedisToo().run((context) -> assertThat(context).hasFailed()
			.getFailure()
			.hasMessageContaining("distributed-lock.store")
			.hasMessageContaining("jdbc")
			.hasMessageContaining("redis"));
	}

	@Test
	void withRedisTooTheStorePropertyChooses() {
		withRedisToo().withPropertyValues("distributed-lock.store=jdbc")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(JdbcLockProvider.class)
				.doesNotHaveBean(RedisLockProvider.class));
		withRedisToo().withPropertyValues("distributed-lock.store=redis")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RedisLockProvider.class)
				.doesNotHaveBean(JdbcLockProvider.class));
	}

	@Test
	void backsOffWithoutADataSource() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DistributedLockJdbcAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(JdbcLockProvider.class));
	}

}
