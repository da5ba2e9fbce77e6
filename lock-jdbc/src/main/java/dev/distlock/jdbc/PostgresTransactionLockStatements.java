package dev.distlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.OptionalLong;

/**
 * PostgreSQL: a transaction-level advisory lock on a 64-bit hash of the table and the key
 * ({@code pg_advisory_xact_lock}), which the database itself frees when the transaction
 * ends. A free lock costs one statement ({@code pg_try_advisory_xact_lock}); a busy one
 * is waited for in the database's lock queue under a savepoint, with {@code lock_timeout}
 * set to the wait time for that one statement and set back after it: a timeout rolls back
 * to the savepoint, which also restores {@code lock_timeout}, so the transaction stays
 * usable. Then one upsert raises the key's fence. Two keys whose hashes collide exclude
 * each other, which costs waiting, never safety.
 */
final class PostgresTransactionLockStatements extends TransactionLockStatements {

	private static final String NOW_MICROS = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

	/** PostgreSQL's lock_not_available: the lock timeout ran out. */
	private static final String LOCK_NOT_AVAILABLE = "55P03";

	private final String fence;

	PostgresTransactionLockStatements(String table, int timeoutSeconds) {
		super(table, timeoutSeconds);
		this.fence = "INSERT INTO " + table + " AS l (name, fence) VALUES (?, " + NOW_MICROS + ")"
				+ " ON CONFLICT (name) DO UPDATE SET fence = GREATEST(l.fence + 1, EXCLUDED.fence) RETURNING l.fence";
	}

	@Override
	OptionalLong lock(Connection connection, String key, Duration waitTime) throws SQLException {
		long hash = hash(this.table, key);
		if (!tryLock(connection, hash) && (waitTime.isZero() || !waitForLock(connection, hash, waitTime))) {
			return OptionalLong.empty();
		}
		return OptionalLong.of(queryLong(connection, this.fence, key));
	}

	private boolean tryLock(Connection connection, long hash) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("SELECT pg_try_advisory_xact_lock(?)")) {
			statement.setQueryTimeout(this.timeoutSeconds);
			statement.setLong(1, hash);
			try (ResultSet result = statement.executeQuery()) {
				return result.next() && result.getBoolean(1);
			}
		}
	}

	/**
	 * Waits in the database's queue for the lock, at most {@code waitTime}: an error
	 * would abort the whole transaction, so the wait runs under a savepoint that a
	 * timeout rolls back to.
	 */
	private boolean waitForLock(Connection connection, long hash, Duration waitTime) throws SQLException {
		Savepoint savepoint = connection.setSavepoint();
		try {
			String previous;
			try (PreparedStatement statement = connection
				.prepareStatement("SELECT current_setting('lock_timeout'), set_config('lock_timeout', ?, true)")) {
				statement.setQueryTimeout(this.timeoutSeconds);
				statement.setString(1, Math.max(1, waitTime.toMillis()) + "ms");
				try (ResultSet result = statement.executeQuery()) {
					result.next();
					previous = result.getString(1);
				}
			}
			try (PreparedStatement statement = connection
				.prepareStatement("SELECT pg_advisory_xact_lock(?), set_config('lock_timeout', ?, true)")) {
				// Only a guard: lock_timeout ends the wait first.
				statement
					.setQueryTimeout((int) Math.min(Integer.MAX_VALUE, waitTime.toSeconds() + 1 + this.timeoutSeconds));
				statement.setLong(1, hash);
				statement.setString(2, previous);
				statement.executeQuery().close();
			}
			connection.releaseSavepoint(savepoint);
			return true;
		}
		catch (SQLException ex) {
			try {
				connection.rollback(savepoint);
			}
			catch (SQLException rollback) {
				ex.addSuppressed(rollback);
				throw ex;
			}
			if (LOCK_NOT_AVAILABLE.equals(ex.getSQLState())) {
				return false;
			}
			throw ex;
		}
	}

	/** The first 8 bytes of the SHA-256 of the table and the key. */
	static long hash(String table, String key) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256")
				.digest(("distlock:" + table + ":" + key).getBytes(StandardCharsets.UTF_8));
			long hash = 0;
			for (int i = 0; i < Long.BYTES; i++) {
				hash = (hash << 8) | (digest[i] & 0xff);
			}
			return hash;
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}

}
