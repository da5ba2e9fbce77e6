package dev.distlock.autoconfigure.jdbc;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.jdbc.JdbcFence;
import dev.distlock.jdbc.JdbcLockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A {@link JdbcFence} over the application's {@link DataSource}, for fenced writes to the
 * database in the caller's transaction, when {@code lock-jdbc} is on the class path and
 * there is one DataSource (or a primary one), whichever store holds the locks: a token
 * from any store fences a write to the database. Settings under
 * {@code distributed-lock.fence.jdbc}; checks wait at most
 * {@code distributed-lock.store-timeout}.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ JdbcFence.class, JdbcTemplate.class, DataSource.class })
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties({ DistributedLockJdbcFenceProperties.class, DistributedLockProperties.class })
public final class DistributedLockJdbcFenceAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockJdbcFenceAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean
	JdbcFence distributedLockJdbcFence(DataSource dataSource, DistributedLockJdbcFenceProperties fence,
			DistributedLockProperties properties) {
		try {
			JdbcLockProvider.checkTableName(fence.getTableName());
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.fence.jdbc.table-name",
					fence.getTableName(), ex.getMessage());
		}
		JdbcFence jdbcFence = JdbcFence.builder(dataSource)
			.tableName(fence.getTableName())
			.timeout(properties.getStoreTimeout())
			.build();
		DatabaseInitializationMode mode = fence.getInitializeSchema();
		if (mode == DatabaseInitializationMode.ALWAYS
				|| (mode == DatabaseInitializationMode.EMBEDDED && EmbeddedDatabaseConnection.isEmbedded(dataSource))) {
			try {
				jdbcFence.createTableIfMissing();
			}
			catch (LockBackendException ex) {
				// Fenced writes will fail until the database answers, and say why then.
				logger.warn("Could not create the fence table '" + fence.getTableName() + "' at startup: "
						+ ex.getMessage());
			}
			catch (IllegalStateException ex) {
				if (mode == DatabaseInitializationMode.ALWAYS) {
					throw ex;
				}
				// An embedded database (H2, HSQLDB, Derby) has no fence: an application
				// that
				// does not write through the fence must still start.
				logger.debug("No fence table created in the embedded database: " + ex.getMessage());
			}
		}
		return jdbcFence;
	}

}
