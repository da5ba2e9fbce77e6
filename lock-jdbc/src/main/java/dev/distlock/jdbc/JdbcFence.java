package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

import javax.sql.DataSource;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.StaleTokenException;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Makes writes to a database refuse a stale lock holder: before its {@code UPDATE} or
 * {@code INSERT}, a holder {@linkplain #check checks} its
 * {@linkplain Lease#fencingToken() fencing token} against the highest token the resource
 * has accepted, in the same transaction. A token lower than that is refused with
 * {@link StaleTokenException} and the transaction is rolled back, so the holder's writes
 * in it never commit; an equal or higher token is accepted and becomes the highest.
 *
 * <p>
 * Each resource (a name of the caller's choosing, such as {@code "stock:" + sku}, at most
 * 255 characters) has a row in a fence table of its own (default
 * {@value #DEFAULT_TABLE_NAME}, DDL shipped as
 * {@code classpath:dev/distlock/jdbc/schema-fence-<database>.sql}); the application's own
 * tables need no change. The check locks that row until the transaction ends, so two
 * writers of one resource run their check-and-write one after another, each against the
 * token the other committed: an older token can never be written after a newer one. A
 * writer waiting for that row waits at most the timeout (default 3 s, or the
 * transaction's own if shorter), then fails with {@link LockBackendException}.
 *
 * <p>
 * The check must run inside a transaction on the database it fences: on a connection with
 * autocommit it would commit at once, release the row and prove nothing about the write
 * that follows, so it is refused with {@link IllegalStateException}. With Spring, call
 * {@link #check(String, long)} inside {@code @Transactional} or a
 * {@code TransactionTemplate} on the same {@link DataSource} that {@code JdbcClient} or
 * {@code JdbcTemplate} use; with plain JDBC, pass the connection
 * ({@link #check(Connection, String, long)}).
 *
 * <p>
 * PostgreSQL, MariaDB and MySQL 8, detected from the connection unless given.
 */
public final class JdbcFence {

	/** The fence table when none is named. */
	public static final String DEFAULT_TABLE_NAME = "distributed_lock_fence";

	/** The longest a check waits, when not configured. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

	private final DataSource dataSource;

	private final String tableName;

	private final int timeoutSeconds;

	private volatile @Nullable FenceStatements statements;

	private volatile @Nullable JdbcLockDialect dialect;

	/**
	 * A fence over {@code dataSource} with the table {@value #DEFAULT_TABLE_NAME}, the
	 * database detected, and a timeout of 3 s.
	 */
	public JdbcFence(DataSource dataSource) {
		this(builder(dataSource));
	}

	private JdbcFence(Builder builder) {
		this.dataSource = (builder.dataSource instanceof TransactionAwareDataSourceProxy proxy
				&& proxy.getTargetDataSource() != null) ? proxy.getTargetDataSource() : builder.dataSource;
		this.tableName = JdbcLockProvider.checkTableName(builder.tableName);
		if (builder.timeout.isNegative() || builder.timeout.toMillis() < 1) {
			throw new IllegalArgumentException("timeout must be at least 1ms but was " + builder.timeout);
		}
		// JDBC's query timeout counts whole seconds (0 is none): round up.
		this.timeoutSeconds = (int) Math.min(Integer.MAX_VALUE, (builder.timeout.toMillis() + 999) / 1000);
		this.dialect = builder.dialect;
	}

	/** A builder for a fence over {@code dataSource}. */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	/** The fence table's name. */
	public String tableName() {
		return this.tableName;
	}

	/**
	 * Checks {@code token} against the highest token {@code resource} has accepted, in
	 * the Spring-managed transaction on this fence's {@link DataSource} (the one
	 * {@code @Transactional}, {@code TransactionTemplate}, {@code JdbcClient} and
	 * {@code JdbcTemplate} use). Accepted, the token becomes the resource's highest, and
	 * the resource's row stays locked until the transaction ends; the caller's writes
	 * follow in the same transaction.
	 * @throws StaleTokenException if {@code token} is lower than the highest; the
	 * transaction is then marked rollback-only, so it rolls back even if the exception is
	 * caught
	 * @throws IllegalStateException outside a transaction (the connection is in
	 * autocommit), or when the fence table is missing
	 * @throws LockBackendException if the database fails, or the check waited longer than
	 * the timeout for another writer of the resource
	 */
	public void check(String resource, long token) {
		Connection connection = DataSourceUtils.getConnection(this.dataSource);
		try {
			run(connection, resource, token, timeoutSeconds(), true);
		}
		catch (StaleTokenException ex) {
			if (TransactionSynchronizationManager.getResource(this.dataSource) instanceof ConnectionHolder holder) {
				holder.setRollbackOnly();
			}
			throw ex;
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.dataSource);
		}
	}

	/**
	 * Checks {@code token} against the highest token {@code resource} has accepted, in
	 * the transaction of {@code connection} (autocommit off). Accepted, the token becomes
	 * the resource's highest, and the resource's row stays locked until the caller
	 * commits or rolls back; the caller's writes follow on the same connection.
	 * @throws StaleTokenException if {@code token} is lower than the highest; the
	 * connection's transaction has then been rolled back
	 * @throws IllegalStateException if {@code connection} is in autocommit, or the fence
	 * table is missing
	 * @throws LockBackendException if the database fails, or the check waited longer than
	 * the timeout for another writer of the resource
	 */
	public void check(Connection connection, String resource, long token) {
		try {
			run(connection, resource, token, this.timeoutSeconds, false);
		}
		catch (StaleTokenException ex) {
			try {
				connection.rollback();
			}
			catch (SQLException rollback) {
				ex.addSuppressed(rollback);
			}
			throw ex;
		}
	}

	private void run(Connection connection, String resource, long token, int timeoutSeconds, boolean spring) {
		checkResource(resource);
		JdbcLockDialect known = null;
		try {
			if (connection.getAutoCommit()) {
				throw new IllegalStateException("A fenced write to '" + resource + "' must run in a transaction: in"
						+ " autocommit the check would commit on its own and prove nothing about the write after it."
						+ (spring ? " Call it inside @Transactional or a TransactionTemplate on the same DataSource."
								: " Call connection.setAutoCommit(false) first, and commit after the write."));
			}
			known = dialect(connection);
			long highest = statements(known).raise(connection, resource, token, timeoutSeconds);
			if (highest > token) {
				throw new StaleTokenException(resource, token, highest);
			}
		}
		catch (SQLException ex) {
			throw failed(known, resource, ex);
		}
	}

	private RuntimeException failed(@Nullable JdbcLockDialect known, String resource, SQLException ex) {
		String state = (ex.getSQLState() != null) ? ex.getSQLState() : "";
		String database = (known != null) ? label(known) : "The database";
		if (known != null && (state.equals("42P01") || state.equals("42S02"))) {
			return new IllegalStateException("The fence table '" + this.tableName + "' does not exist in " + database
					+ ". Create it with the DDL in lock-jdbc's jar at classpath:"
					+ FenceStatements.schemaResource(known) + " (renaming the table if you chose another name),"
					+ " or set distributed-lock.fence.jdbc.initialize-schema=always to have it created at startup.",
					ex);
		}
		return new LockBackendException(resource,
				database + " failed to check the fence of '" + resource + "': " + Causes.describe(ex), ex);
	}

	/** The configured timeout, or the transaction's remaining time if shorter. */
	private int timeoutSeconds() {
		if (TransactionSynchronizationManager.getResource(this.dataSource) instanceof ConnectionHolder holder
				&& holder.hasTimeout()) {
			return Math.min(this.timeoutSeconds, holder.getTimeToLiveInSeconds());
		}
		return this.timeoutSeconds;
	}

	/**
	 * Creates the fence table if it does not exist, with the DDL shipped for this
	 * database under this fence's table name, on a connection of its own.
	 * @throws LockBackendException if the database fails
	 */
	public void createTableIfMissing() {
		JdbcLockDialect known = null;
		try (Connection connection = this.dataSource.getConnection()) {
			known = dialect(connection);
			SchemaResources.create(connection, FenceStatements.ddl(known, this.tableName), this.timeoutSeconds);
		}
		catch (SQLException ex) {
			String database = (known != null) ? label(known) : "The database";
			throw new LockBackendException("",
					database + " failed to create the fence table '" + this.tableName + "': " + Causes.describe(ex),
					ex);
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

	private FenceStatements statements(JdbcLockDialect known) {
		FenceStatements current = this.statements;
		if (current == null) {
			current = new FenceStatements(known, this.tableName);
			this.statements = current;
		}
		return current;
	}

	private static void checkResource(String resource) {
		if (resource.isEmpty() || resource.length() > JdbcLockProvider.MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("A fenced resource's name has 1 to " + JdbcLockProvider.MAX_KEY_LENGTH
					+ " characters (the fence table's resource column), but got " + resource.length());
		}
	}

	private static String label(JdbcLockDialect dialect) {
		return switch (dialect.name()) {
			case "postgresql" -> "PostgreSQL";
			case "mariadb" -> "MariaDB";
			default -> "MySQL";
		};
	}

	/** Settings of a {@link JdbcFence}. */
	public static final class Builder {

		private final DataSource dataSource;

		private String tableName = DEFAULT_TABLE_NAME;

		private Duration timeout = DEFAULT_TIMEOUT;

		private @Nullable JdbcLockDialect dialect;

		private Builder(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		/**
		 * The fence table: an SQL identifier, optionally qualified by a schema;
		 * {@value JdbcFence#DEFAULT_TABLE_NAME} by default.
		 */
		public Builder tableName(String tableName) {
			this.tableName = tableName;
			return this;
		}

		/**
		 * The longest a check waits for the database, including for another writer's
		 * transaction that holds the resource's row; 3 s by default, rounded up to whole
		 * seconds (JDBC's query timeout).
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

		public JdbcFence build() {
			return new JdbcFence(this);
		}

	}

}
