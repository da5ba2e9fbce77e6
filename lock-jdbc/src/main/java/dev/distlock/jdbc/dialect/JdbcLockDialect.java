package dev.distlock.jdbc.dialect;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * The SQL of the lock table for one database. Every statement reads the database's clock,
 * never the JVM's; every statement that changes a held lock checks its owner and fence;
 * the fence of a key only rises (to at least the database's clock in microseconds, so
 * that a row swept while idle and created again starts above every token it issued
 * before).
 *
 * <p>
 * Each operation runs as one statement in autocommit on the connection it is given,
 * except where a database cannot do it in one: on MariaDB and MySQL the first acquisition
 * of a key (no row yet) inserts after an update that found nothing, and an attempt that
 * finds the lock busy reads the holder's remaining lease.
 */
public abstract sealed class JdbcLockDialect permits PostgresDialect, MySqlDialect {

	/** PostgreSQL 12 or later. */
	public static final JdbcLockDialect POSTGRESQL = new PostgresDialect();

	/** MariaDB 10.6 or later. */
	public static final JdbcLockDialect MARIADB = new MySqlDialect("mariadb");

	/**
	 * MySQL 8 or later. Its SQL is the MariaDB dialect's, and is tested against MariaDB
	 * only: no MySQL server runs in this project's build.
	 */
	public static final JdbcLockDialect MYSQL = new MySqlDialect("mysql");

	private final String name;

	private final Map<String, Common> common = new ConcurrentHashMap<>();

	JdbcLockDialect(String name) {
		this.name = name;
	}

	/**
	 * The statements whose shape every database shares, for {@code table}: renew and undo
	 * ({@code expires_at} and {@code owner} set by the dialect's clock) and the sweep.
	 */
	abstract Common common(String table);

	/** An SQL expression for the database's clock in microseconds since the epoch. */
	abstract String nowMicros();

	private Common commonOf(String table) {
		return this.common.computeIfAbsent(table, this::common);
	}

	/**
	 * The dialect of the database behind {@code metaData}, from its product name.
	 * @throws IllegalStateException for a database that has none
	 */
	public static JdbcLockDialect detect(DatabaseMetaData metaData) throws SQLException {
		String product = metaData.getDatabaseProductName();
		String version = metaData.getDatabaseProductVersion();
		String both = (product + " " + version).toLowerCase(Locale.ROOT);
		if (both.contains("postgresql")) {
			return POSTGRESQL;
		}
		// MySQL's driver calls a MariaDB server "MySQL", but its version says MariaDB.
		if (both.contains("mariadb")) {
			return MARIADB;
		}
		if (both.contains("mysql")) {
			return MYSQL;
		}
		throw new IllegalStateException("distlock's JDBC store supports PostgreSQL, MariaDB and MySQL, but the"
				+ " DataSource connects to " + product + " " + version);
	}

	/**
	 * The name of the database, as in the DDL file's name ({@code schema-<name>.sql}).
	 */
	public String name() {
		return this.name;
	}

	/** The class path of the DDL that creates the lock table, named distributed_lock. */
	public String schemaResource() {
		return "dev/distlock/jdbc/schema-" + this.name + ".sql";
	}

	/**
	 * Takes the lock on {@code key} for {@code owner} if it is free or its lease ran out,
	 * reserving a block of {@code tokens} fencing tokens in the same statement: the fence
	 * moves to {@code max(fence + 1, database clock in microseconds) + tokens - 1}, the
	 * block's last token, so that every later acquisition gets a greater one. Otherwise
	 * reports the holder's remaining lease, and marks the row as waited on if
	 * {@code waiting}, so that its release is signalled (PostgreSQL) and reports the
	 * mark.
	 */
	public abstract Acquire acquire(Connection connection, String table, String key, String owner, long leaseMicros,
			boolean waiting, int tokens) throws SQLException;

	/**
	 * Extends the lease if {@code owner} with {@code fence} holds it and it has not run
	 * out.
	 */
	public boolean renew(Connection connection, String table, Lease lease) throws SQLException {
		return update(connection, commonOf(table).renew(), lease.leaseMicros(), lease.key(), lease.owner(),
				lease.fence()) == 1;
	}

	/**
	 * Renews each lease held by its owner and fence that has not run out, in one
	 * statement where the database allows it.
	 * @return for each lease, whether it was renewed
	 */
	public abstract boolean[] renewAll(Connection connection, String table, List<Lease> leases) throws SQLException;

	/**
	 * Frees the lock if {@code owner} with {@code fence} (the stored fence: the last
	 * token of the acquisition's block) holds it and its lease has not run out; the row,
	 * and its fence, stay. Signals waiters on {@code channel} if the row was waited on
	 * and the database can signal, and tells whether it was.
	 */
	public abstract Release release(Connection connection, String table, String key, String owner, long fence,
			@Nullable String channel) throws SQLException;

	/**
	 * Whether {@code owner} with {@code fence} holds the lock and its lease has not run
	 * out, changing nothing: the owner check after a local hand-over.
	 */
	public boolean held(Connection connection, String table, String key, String owner, long fence) throws SQLException {
		return exists(connection, commonOf(table).held(), key, owner, fence);
	}

	/**
	 * Whether the lock is free with its fence still at {@code fence}: nobody took it
	 * since the acquisition whose block ends at {@code fence}, and it was freed, by that
	 * acquisition's own release when a re-run of that release asks (the row's owner is
	 * cleared only by a release or an undo). Reports whether a waiter had marked it.
	 */
	public Release releasedAt(Connection connection, String table, String key, long fence) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(commonOf(table).released())) {
			statement.setString(1, key);
			statement.setLong(2, fence);
			try (ResultSet result = statement.executeQuery()) {
				if (!result.next()) {
					return Release.NOT_HELD;
				}
				return result.getBoolean(1) ? Release.RELEASED_TO_WAITERS : Release.RELEASED;
			}
		}
	}

	/**
	 * Frees the lock if {@code owner} holds it, whatever its lease: undoes an acquisition
	 * whose outcome the caller never learnt (the owner is unique to it).
	 */
	public boolean undo(Connection connection, String table, String key, String owner) throws SQLException {
		return update(connection, commonOf(table).undo(), key, owner) == 1;
	}

	/**
	 * Deletes rows whose lease ran out more than {@code idleMicros} ago and whose fence
	 * is below the database's clock in microseconds (token blocks can move a busy key's
	 * fence ahead of the clock: such a row stays until the clock has passed it). A key
	 * taken again later starts its fence at the database's clock, above every token
	 * issued before.
	 * @return the number of rows deleted
	 */
	public int sweep(Connection connection, String table, long idleMicros) throws SQLException {
		return update(connection, commonOf(table).sweep(), idleMicros);
	}

	/**
	 * The channel on which releases of waited-on locks are signalled, or null if this
	 * database has no such signal (waiters then poll).
	 */
	public @Nullable String releaseChannel(String table) {
		return null;
	}

	/**
	 * What is wrong with how {@code table}'s key column compares keys, or null when it
	 * compares them exactly, byte for byte, as the JVM does: a statement to fix it is
	 * part of the answer.
	 */
	public @Nullable String keyColumnProblem(Connection connection, String table) throws SQLException {
		return null;
	}

	/** The database's clock, in microseconds since the epoch. */
	public long clockMicros(Connection connection) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("SELECT " + nowMicros());
				ResultSet result = statement.executeQuery()) {
			result.next();
			return result.getLong(1);
		}
	}

	/**
	 * Runs {@code sql} with {@code parameters} (strings and longs) and counts its rows.
	 */
	static int update(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			return statement.executeUpdate();
		}
	}

	/** Runs the query {@code sql} with {@code parameters}: whether it found a row. */
	static boolean exists(Connection connection, String sql, Object... parameters) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			bind(statement, parameters);
			try (ResultSet result = statement.executeQuery()) {
				return result.next();
			}
		}
	}

	private static void bind(PreparedStatement statement, Object... parameters) throws SQLException {
		for (int i = 0; i < parameters.length; i++) {
			if (parameters[i] instanceof Long number) {
				statement.setLong(i + 1, number);
			}
			else {
				statement.setString(i + 1, (String) parameters[i]);
			}
		}
	}

	@Override
	public String toString() {
		return this.name;
	}

	/**
	 * The outcome of an acquire.
	 *
	 * @param acquired whether the lock was taken
	 * @param fence the fencing token when taken: the first of the reserved block
	 * @param lastFence the last token of the block when taken, which the row now holds
	 * @param remainingMicros when busy, the holder's remaining lease (at least 1)
	 * @param readers when busy, whether readers may be the holders (true when the
	 * statement did not tell): only then does a waiting writer record an intent
	 */
	public record Acquire(boolean acquired, long fence, long lastFence, long remainingMicros, boolean readers) {

		/** An outcome that does not tell who holds a busy lock. */
		public Acquire(boolean acquired, long fence, long lastFence, long remainingMicros) {
			this(acquired, fence, lastFence, remainingMicros, true);
		}

		/** Taken, with the fence the row now holds: the last of {@code tokens}. */
		static Acquire taken(long lastFence, int tokens) {
			return new Acquire(true, lastFence - tokens + 1, lastFence, 0);
		}

		static Acquire busy(long remainingMicros) {
			return new Acquire(false, 0, 0, Math.max(1, remainingMicros));
		}

		/** Busy, held by readers ({@code readers}) or by a plain lock. */
		static Acquire busy(long remainingMicros, boolean readers) {
			return new Acquire(false, 0, 0, Math.max(1, remainingMicros), readers);
		}

	}

	/** The outcome of a release. */
	public enum Release {

		/** The lock was not held by the owner and fence any more: nothing changed. */
		NOT_HELD,

		/** Freed; nobody had marked the row as waited on. */
		RELEASED,

		/**
		 * Freed, and a waiter had marked the row while it was held (the release signalled
		 * it where the database can).
		 */
		RELEASED_TO_WAITERS;

		/** Whether the lock was freed. */
		public boolean released() {
			return this != NOT_HELD;
		}

	}

	/**
	 * The statements every database shares in shape.
	 *
	 * @param renew extends a held lease: lease micros, key, owner, fence
	 * @param undo frees a lock held by an owner whatever its lease: key, owner
	 * @param sweep deletes rows idle for longer than the given micros
	 * @param held finds a lock held by an owner and fence, not run out: key, owner, fence
	 * @param released reads the mark of a free lock whose fence is still the given one:
	 * key, fence
	 */
	record Common(String renew, String undo, String sweep, String held, String released) {

		/**
		 * With the owner check and the read of a freed row, from {@code heldWhere}: the
		 * dialect's {@code WHERE} clause of a held lock (key, owner, fence, not run out).
		 */
		static Common of(String table, String renew, String undo, String sweep, String heldWhere) {
			return new Common(renew, undo, sweep, "SELECT 1 FROM " + table + heldWhere,
					"SELECT waited FROM " + table + " WHERE name = ? AND owner IS NULL AND fence = ?");
		}

	}

	/** One held lease, as a renewal names it. */
	public record Lease(String key, String owner, long fence, long leaseMicros) {

	}

}
