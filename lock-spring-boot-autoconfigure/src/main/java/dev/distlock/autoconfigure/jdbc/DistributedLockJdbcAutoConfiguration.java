package dev.distlock.autoconfigure.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.autoconfigure.ConditionalOnLockStore;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.autoconfigure.LockStoreCandidate;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.spi.LockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.context.annotation.Bean;
import org.springframework.core.log.LogMessage;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

/**
 * The JDBC store: a {@link JdbcLockProvider} over the application's {@link DataSource},
 * when {@code lock-jdbc} is on the class path, there is one DataSource (or a primary
 * one), and {@code distributed-lock.store} is unset or {@code jdbc}. Settings under
 * {@code distributed-lock.jdbc}. The lock table is created at startup if asked
 * ({@code initialize-schema}) and checked either way: a missing table or column stops
 * startup with a message naming it and the DDL.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class, before = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ JdbcLockProvider.class, JdbcTemplate.class, DataSource.class })
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnLockStore("jdbc")
@EnableConfigurationProperties(DistributedLockJdbcProperties.class)
public final class DistributedLockJdbcAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockJdbcAutoConfiguration.class);

	@Bean
	LockStoreCandidate distributedLockJdbcStore() {
		return new LockStoreCandidate("jdbc");
	}

	@Bean
	@ConditionalOnMissingBean
	LockProvider distributedLockProvider(DataSource dataSource, DistributedLockProperties properties,
			DistributedLockJdbcProperties jdbc) {
		check(jdbc, properties.getStoreTimeout());
		JdbcLockProvider.Builder builder = JdbcLockProvider.builder(dataSource)
			.tableName(jdbc.getTableName())
			.storeTimeout(properties.getStoreTimeout())
			.sweepAfter(jdbc.getSweepAfter());
		DataSource listener = jdbc.isListenerOutsidePool() ? unpooled(dataSource) : null;
		if (listener != null) {
			builder.listenerDataSource(listener);
		}
		JdbcLockProvider provider = builder.build();
		try {
			DatabaseInitializationMode mode = jdbc.getInitializeSchema();
			if (mode == DatabaseInitializationMode.ALWAYS || (mode == DatabaseInitializationMode.EMBEDDED
					&& EmbeddedDatabaseConnection.isEmbedded(dataSource))) {
				provider.createTableIfMissing();
			}
			validateSchema(provider);
			logger.info(LogMessage.format("Distributed locks use the JDBC store on %s (table '%s', store timeout %dms)",
					provider.dialect().name(), jdbc.getTableName(), properties.getStoreTimeout().toMillis()));
		}
		catch (LockBackendException ex) {
			// The database does not answer now; the locks will fail until it does, and
			// say why then. Startup need not wait for it.
			logger.warn("Could not check the distributed-lock table '" + jdbc.getTableName() + "' at startup: "
					+ ex.getMessage());
			logger.info(LogMessage.format(
					"Distributed locks use the JDBC store (table '%s', store timeout %dms;"
							+ " the table could not be checked at startup)",
					jdbc.getTableName(), properties.getStoreTimeout().toMillis()));
		}
		catch (RuntimeException ex) {
			provider.close();
			throw ex;
		}
		return provider;
	}

	private static void validateSchema(JdbcLockProvider provider) {
		try {
			provider.validateSchema();
		}
		catch (IllegalStateException ex) {
			throw new MissingLockTableException(provider.tableName(), provider.dialect().schemaResource(), ex);
		}
	}

	/**
	 * A data source of plain driver connections with the pool's URL and credentials, for
	 * the release listener's one long-lived connection; null when they cannot be read.
	 */
	private static @Nullable DataSource unpooled(DataSource dataSource) {
		try {
			return DataSourceBuilder.derivedFrom(dataSource).type(SimpleDriverDataSource.class).build();
		}
		catch (RuntimeException ex) {
			logger.debug("The release listener borrows its connection from the pool: cannot derive a plain"
					+ " connection from " + dataSource.getClass().getName(), ex);
			return null;
		}
	}

	private static void check(DistributedLockJdbcProperties jdbc, Duration storeTimeout) {
		if (storeTimeout.isNegative() || storeTimeout.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.store-timeout", storeTimeout,
					"The value must be at least 1ms.");
		}
		try {
			JdbcLockProvider.checkTableName(jdbc.getTableName());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.jdbc.table-name",
					jdbc.getTableName(), ex.getMessage());
		}
		Duration sweepAfter = jdbc.getSweepAfter();
		if (sweepAfter.isNegative() || sweepAfter.toSeconds() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.jdbc.sweep-after", sweepAfter,
					"The value must be at least 1s (rows whose lease ran out stay this long before they are"
							+ " deleted).");
		}
	}

}
