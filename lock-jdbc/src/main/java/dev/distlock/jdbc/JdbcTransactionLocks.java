package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

import javax.sql.DataSource;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.TransactionLocks;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link TransactionLocks} in PostgreSQL, MariaDB or MySQL 8, on the connection of the
 * Spring-managed transaction on a {@link DataSource} (the one {@code @Transactional},
 * {@code TransactionTemplate}, {@code JdbcClient} and {@code JdbcTemplate} use).
 *
 * <p>
 * PostgreSQL: a transaction-level advisory lock ({@code pg_advisory_xact_lock}) on a hash
 * of the key. MariaDB and MySQL: an exclusive lock on the key's row
 * ({@code SELECT ... FOR
 * UPDATE}). Either way the database frees the lock when the transaction ends and at no
 * other time, and a wait is bounded in the database ({@code lock_timeout},
 * {@code innodb_lock_wait_timeout}), set for the one waiting statement and set back after
 * it. A server that stops answering fails the call too: the connection's network timeout
 * is set past those bounds while the call runs.
 *
 * <p>
 * The fencing token is the key's fence in the table {@value #DEFAULT_TABLE_NAME} (DDL
 * shipped as {@code classpath:dev/distlock/jdbc/schema-tx-<database>.sql}), raised in the
 * holder's transaction to {@code max(fence + 1, database clock in microseconds)}, so it
 * is above every token of a holder that committed before. A holder that rolls back leaves
 * the fence unchanged; its writes did not commit either. Re-entry in one transaction
 * returns the first token without a statement.
 */
public final class JdbcTransactionLocks implements TransactionLocks {

	/** The fence table of transaction locks when none is named. */
	public static final String DEFAULT_TABLE_NAME = "distributed_lock_tx";

	private final DataSource dataSource;

	private final String tableName;

	private final Duration waitTime;

	private final int timeoutSeconds;

	private volatile @Nullable JdbcLockDialect dialect;

	private volatile @Nullable TransactionLockStatements statements;

	private JdbcTransactionLocks(Builder builder) {
		this.dataSource = (builder.dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : builder.dataSource;
		this.tableName = JdbcLockProvider.checkTableName(builder.tableName);
		this.waitTime = checkWaitTime(builder.waitTime);
		if (builder.timeout.isNegative() || builder.timeout.toMillis() < 1) {
			throw new IllegalArgumentException("timeout must be at least 1ms but was " + builder.timeout);
		}
		// JDBC's query timeout counts whole seconds (0 is none): round up.
		this.timeoutSeconds = (int) Math.min(Integer.MAX_VALUE, (builder.timeout.toMillis() + 999) / 1000);
		this.dialect = builder.dialect;
	}

	/**
	 * Transaction locks over {@code dataSource} with the table
	 * {@value #DEFAULT_TABLE_NAME}, the database detected, a wait time of 5 s and
	 * statements bounded by 3 s.
	 */
	public JdbcTransactionLocks(DataSource dataSource) {
		this(builder(dataSource));
	}

	/** A builder for transaction locks over {@code dataSource}. */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	/** The fence table's name. */
	public String tableName() {
		return this.tableName;
	}

	@Override
	public long lock(String key) {
		return lock(key, this.waitTime);
	}

	@Override
	public long lock(String key, Duration waitTime) {
		OptionalLong token = tryLock(key, waitTime);
		if (token.isEmpty()) {
			throw new LockAcquisitionException(key, waitTime, "Transaction lock '" + key + "' not acquired within "
					+ waitTime.toMillis() + "ms: another transaction holds it", null);
		}
		return token.getAsLong();
	}

	@Override
	public OptionalLong tryLock(String key, Duration waitTime) {
		checkKey(key);
		checkWaitTime(waitTime);
		if (!TransactionSynchronizationManager.isActualTransactionActive()
				|| !TransactionSynchronizationManager.isSynchronizationActive()) {
			throw noTransaction(key, "no transaction is active on this thread");
		}
		Connection connection = DataSourceUtils.getConnection(this.dataSource);
		JdbcLockDialect known = null;
		try {
			if (connection.getAutoCommit()) {
				throw noTransaction(key,
						"the active transaction does not cover this DataSource" + " (its connection is in autocommit)");
			}
			Map<String, Long> held = held(connection);
			Long token = held.get(key);
			if (token != null) {
				return OptionalLong.of(token);
			}
			known = dialect(connection);
			OptionalLong taken = lockBounded(connection, statements(known), key, waitTime);
			if (taken.isPresent()) {
				held.put(key, taken.getAsLong());
			}
			return taken;
		}
		catch (SQLException ex) {
			throw failed(known, key, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new LockAcquisitionException(key, waitTime,
					"Interrupted while waiting for transaction lock '" + key + "'", ex);
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.dataSource);
		}
	}

	/**
	 * Locks with the connection's network timeout set past the longest a statement may
	 * take ({@link NetworkTimeout}). A read that times out breaks the connection, and
	 * with it the transaction, which then commits nothing.
	 */
	private OptionalLong lockBounded(Connection connection, TransactionLockStatements statements, String key,
			Duration waitTime) throws SQLException, InterruptedException {
		try (NetworkTimeout bounded = NetworkTimeout.set(connection, statements.networkTimeoutMillis(waitTime))) {
			return statements.lock(connection, key, waitTime);
		}
	}

	/**
	 * The keys the transaction of {@code connection} holds, with their tokens: bound to
	 * the transaction and dropped when it completes. Keyed by the connection too, so that
	 * a new transaction suspending this one ({@code REQUIRES_NEW}) does not see its keys.
	 */
	@SuppressWarnings("unchecked")
	private Map<String, Long> held(Connection connection) {
		HeldKeys resource = new HeldKeys(this, connection);
		Map<String, Long> held = (Map<String, Long>) TransactionSynchronizationManager.getResource(resource);
		if (held == null) {
			held = new HashMap<>();
			TransactionSynchronizationManager.bindResource(resource, held);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					TransactionSynchronizationManager.unbindResourceIfPossible(resource);
				}

			});
		}
		return held;
	}

	/**
	 * Creates the fence table if it does not exist, with the DDL shipped for this
	 * database under this table name, on a connection of its own.
	 * @throws LockBackendException if the database fails
	 */
	public void createTableIfMissing() {
		JdbcLockDialect known = null;
		try (Connection connection = this.dataSource.getConnection()) {
			known = dialect(connection);
			SchemaResources.create(connection, TransactionLockStatements.ddl(known, this.tableName),
					this.timeoutSeconds);
		}
		catch (SQLException ex) {
			throw new LockBackendException("", label(known) + " failed to create the transaction lock table '"
					+ this.tableName + "': " + Causes.describe(ex), ex);
		}
	}

	private JdbcLockDialect dialect(Connection connection) throws SQLException {
		JdbcLockDialect known = this.dialect;
		if (known == null) {
			known = JdbcLockDialect.detect(connection.getMetaData());
			this.dialect = known;
		}
		return known;
	}

	private TransactionLockStatements statements(JdbcLockDialect known) {
		TransactionLockStatements current = this.statements;
		if (current == null) {
			current = TransactionLockStatements.of(known, this.tableName, this.timeoutSeconds, this.dataSource);
			this.statements = current;
		}
		return current;
	}

	private IllegalStateException noTransaction(String key, String why) {
		return new IllegalStateException("Transaction lock '" + key + "' needs a transaction, but " + why
				+ ". Lock it inside @Transactional or a TransactionTemplate on the DataSource of the table '"
				+ this.tableName + "'; outside a transaction use @DistributedLock or the LockTemplate.");
	}

	private RuntimeException failed(@Nullable JdbcLockDialect known, String key, SQLException ex) {
		String state = (ex.getSQLState() != null) ? ex.getSQLState() : "";
		if (known != null && (state.equals("42P01") || state.equals("42S02"))) {
			return new IllegalStateException("The transaction lock table '" + this.tableName + "' does not exist in "
					+ label(known) + ". Create it with the DDL in lock-jdbc's jar at classpath:"
					+ TransactionLockStatements.schemaResource(known) + " (renaming the table if you chose another"
					+ " name), or set distributed-lock.jdbc.initialize-schema=always to have it created at startup.",
					ex);
		}
		return new LockBackendException(key,
				label(known) + " failed to take transaction lock '" + key + "': " + Causes.describe(ex), ex);
	}

	private static String label(@Nullable JdbcLockDialect dialect) {
		if (dialect == null) {
			return "The database";
		}
		return switch (dialect.name()) {
			case "postgresql" -> "PostgreSQL";
			case "mariadb" -> "MariaDB";
			default -> "MySQL";
		};
	}

	private static void checkKey(String key) {
		Objects.requireNonNull(key, "A transaction lock's key must not be null");
		if (key.isBlank() || key.length() > JdbcLockProvider.MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("A transaction lock's key has 1 to " + JdbcLockProvider.MAX_KEY_LENGTH
					+ " characters and is not blank, but got '" + ((key.length() > 40)
							? key.substring(0, 40) + "...' of " + key.length() + " characters" : key + "'"));
		}
	}

	private static Duration checkWaitTime(Duration waitTime) {
		Objects.requireNonNull(waitTime, "waitTime must not be null");
		if (waitTime.isNegative()) {
			throw new IllegalArgumentException("waitTime must be zero or positive but was " + waitTime);
		}
		return waitTime;
	}

	/**
	 * The resource key of the keys held by one transaction: this instance and the
	 * transaction's connection, compared by identity.
	 */
	private static final class HeldKeys {

		private final JdbcTransactionLocks owner;

		private final Connection connection;

		HeldKeys(JdbcTransactionLocks owner, Connection connection) {
			this.owner = owner;
			this.connection = connection;
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return (other instanceof HeldKeys that) && this.owner == that.owner && this.connection == that.connection;
		}

		@Override
		public int hashCode() {
			return System.identityHashCode(this.owner) * 31 + System.identityHashCode(this.connection);
		}

	}

	/** Settings of {@link JdbcTransactionLocks}. */
	public static final class Builder {

		private final DataSource dataSource;

		private String tableName = DEFAULT_TABLE_NAME;

		private Duration waitTime = Duration.ofSeconds(5);

		private Duration timeout = JdbcLockProvider.DEFAULT_STORE_TIMEOUT;

		private @Nullable JdbcLockDialect dialect;

		private Builder(DataSource dataSource) {
			this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
		}

		/**
		 * The fence table: an SQL identifier, optionally qualified by a schema;
		 * {@value JdbcTransactionLocks#DEFAULT_TABLE_NAME} by default.
		 */
		public Builder tableName(String tableName) {
			this.tableName = tableName;
			return this;
		}

		/** The wait time of {@link #lock(String)}; 5 s by default. */
		public Builder waitTime(Duration waitTime) {
			this.waitTime = waitTime;
			return this;
		}

		/**
		 * The bound of each statement that does not wait for a lock; 3 s by default,
		 * rounded up to whole seconds (JDBC's query timeout).
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		/** The dialect, instead of detecting it. */
		public Builder dialect(JdbcLockDialect dialect) {
			this.dialect = dialect;
			return this;
		}

		public JdbcTransactionLocks build() {
			return new JdbcTransactionLocks(this);
		}

	}

}
