package dev.distlock.autoconfigure.jdbc;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.TransactionLock;
import dev.distlock.TransactionLocks;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.aop.DistributedLockRuntimeHints;
import dev.distlock.aop.TransactionLockAdvisor;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.jdbc.JdbcTransactionLocks;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
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
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Locks held by the caller's own transaction ({@link TransactionLocks},
 * {@link TransactionLock}) over the application's {@link DataSource}, when
 * {@code lock-jdbc} and spring-tx are on the class path and there is one DataSource (or a
 * primary one), whichever store holds the lease locks. Their fence table is
 * {@code <distributed-lock.jdbc.table-name>_tx}, created at startup as
 * {@code distributed-lock.jdbc.initialize-schema} says; {@code lock(key)} waits
 * {@code distributed-lock.wait-time}, and each statement that does not wait is bounded by
 * {@code distributed-lock.store-timeout}.
 *
 * <p>
 * Registered after the transaction auto-configuration, so that the
 * {@code @TransactionLock} advisor, whose order equals {@code @Transactional}'s default,
 * sorts after it and runs inside the transaction.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class,
		afterName = "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration")
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ JdbcTransactionLocks.class, JdbcTemplate.class, DataSource.class,
		TransactionSynchronizationManager.class, TransactionLockAdvisor.class })
@ConditionalOnSingleCandidate(DataSource.class)
@EnableConfigurationProperties({ DistributedLockJdbcProperties.class, DistributedLockProperties.class })
@ImportRuntimeHints(DistributedLockRuntimeHints.class)
public final class DistributedLockJdbcTransactionAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockJdbcTransactionAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean(TransactionLocks.class)
	JdbcTransactionLocks distributedLockTransactionLocks(DataSource dataSource, DistributedLockJdbcProperties jdbc,
			DistributedLockProperties properties) {
		String table = jdbc.getTableName() + "_tx";
		try {
			JdbcLockProvider.checkTableName(table);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.jdbc.table-name",
					jdbc.getTableName(), "The transaction lock table's name, the lock table's with '_tx' appended, "
							+ "must be an SQL identifier: " + ex.getMessage());
		}
		JdbcTransactionLocks locks = JdbcTransactionLocks.builder(dataSource)
			.tableName(table)
			.waitTime(properties.getWaitTime())
			.timeout(properties.getStoreTimeout())
			.build();
		DatabaseInitializationMode mode = jdbc.getInitializeSchema();
		if (mode == DatabaseInitializationMode.ALWAYS
				|| (mode == DatabaseInitializationMode.EMBEDDED && EmbeddedDatabaseConnection.isEmbedded(dataSource))) {
			try {
				locks.createTableIfMissing();
			}
			catch (LockBackendException ex) {
				// Transaction locks fail until the database answers, and say why then.
				logger
					.warn("Could not create the transaction lock table '" + table + "' at startup: " + ex.getMessage());
			}
			catch (IllegalStateException ex) {
				if (mode == DatabaseInitializationMode.ALWAYS) {
					throw ex;
				}
				// An embedded database (H2, HSQLDB, Derby) has no transaction locks: an
				// application that does not use them must still start.
				logger.debug("No transaction lock table created in the embedded database: " + ex.getMessage());
			}
		}
		return locks;
	}

	/**
	 * Created while other beans are being proxied, possibly early: the locks are looked
	 * up at the first call.
	 */
	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean(TransactionLockAdvisor.class)
	static TransactionLockAdvisor distributedLockTransactionLockAdvisor(ObjectProvider<TransactionLocks> locks,
			ConfigurableListableBeanFactory beanFactory, Environment environment) {
		boolean allowTypes = environment.getProperty("distributed-lock.allow-type-references-in-keys", Boolean.class,
				false);
		return new TransactionLockAdvisor(locks::getObject, beanFactory, allowTypes);
	}

}
