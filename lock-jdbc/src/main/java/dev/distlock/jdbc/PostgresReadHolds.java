package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import org.jspecify.annotations.Nullable;

/**
 * Taking and dropping a read hold on PostgreSQL in one round trip each. The statements of
 * one call are sent together and run as one implicit transaction: the first locks the
 * key's row, and each later one, at {@code READ COMMITTED}, reads what was committed
 * before it began, so the decisions are the ones {@link JdbcReadWriteLocks} makes
 * statement by statement on the other databases, made by the database instead of by a
 * reply and a new statement.
 */
final class PostgresReadHolds {

	private final FamilySql sql;

	/**
	 * A take's statements, for a caller that will not wait and for one that will: lock
	 * the row and read why a read may be busy (key, key); record the hold unless a writer
	 * holds the key or an intent is live, returning its token (owner, lease, key,
	 * readers); make the lock row the readers' with the new hold's lease (3 x readers,
	 * key, owner); for a waiter, mark the row waited on when the hold was not taken (key,
	 * key, owner).
	 */
	private final String take;

	private final String takeWaiting;

	/**
	 * A release's statements: key; key, owner, fence; key, owner, key, readers; and the
	 * channel where there is one.
	 */
	private final String release;

	/** As {@link #release}, dropping the hold whatever its fence and lease (an undo). */
	private final String undo;

	PostgresReadHolds(FamilySql sql) {
		this.sql = sql;
		String live = "t.owner = ? AND t.expires_at > " + sql.now;
		String lockRow = PostgresLockedRow.lock("owner, " + sql.microsUntil("expires_at")
				+ " AS remaining, (SELECT MAX(" + sql.microsUntil("i.expires_at") + ") FROM " + sql.intents
				+ " i WHERE i.name = ? AND i.expires_at > " + sql.now + ") AS intent", sql.table);
		String insertHold = "INSERT INTO " + sql.readers + " (name, owner, fence, expires_at) SELECT name, ?,"
				+ " GREATEST(fence + 1, " + sql.nowMicros + "), " + sql.after("?") + " FROM " + sql.table
				+ " WHERE name = ? AND " + PostgresLockedRow.locked("name")
				+ " AND (owner IS NULL OR owner = ? OR expires_at <= " + sql.now + ")"
				+ " AND NOT EXISTS (SELECT 1 FROM " + sql.intents + " i WHERE i.name = " + sql.table
				+ ".name AND i.expires_at > " + sql.now + ") ON CONFLICT (name, owner) DO UPDATE"
				+ " SET fence = EXCLUDED.fence, expires_at = EXCLUDED.expires_at RETURNING fence";
		// The read row first: the lock row's lease, set after it, is never shorter.
		String markReaders = "UPDATE " + sql.table + " t SET owner = ?, fence = r.fence, expires_at = CASE WHEN " + live
				+ " THEN GREATEST(t.expires_at, r.expires_at) ELSE r.expires_at END, waited = CASE WHEN " + live
				+ " THEN t.waited ELSE FALSE END FROM " + sql.readers + " r WHERE t.name = ? AND "
				+ PostgresLockedRow.locked("t.name") + " AND r.name = t.name AND r.owner = ?";
		String markWaited = "UPDATE " + sql.table + " SET waited = TRUE WHERE name = ? AND NOT EXISTS (SELECT 1 FROM "
				+ sql.readers + " WHERE name = ? AND owner = ?)";
		this.take = lockRow + "; " + insertHold + "; " + markReaders;
		this.takeWaiting = this.take + "; " + markWaited;
		this.release = dropStatements(sql, true);
		this.undo = dropStatements(sql, false);
	}

	/**
	 * Locks the key's row, then drops the hold in one statement, which sets the lock
	 * row's lease to the latest other live read lease, or frees the row when none is left
	 * and signals the release if the row was waited on.
	 */
	private static String dropStatements(FamilySql sql, boolean checkFence) {
		String notify = (sql.channel != null)
				? ", CASE WHEN t.owner IS NULL AND t.waited THEN pg_notify(?, t.name) END IS NULL" : "";
		// The other holds are read in the statement's snapshot, which still shows the
		// dropped one: it is left out by its owner.
		return PostgresLockedRow.lock("1 AS one", sql.table) + "; WITH d AS (DELETE FROM " + sql.readers
				+ " WHERE name = ? AND " + PostgresLockedRow.locked("name") + " AND owner = ?"
				+ (checkFence ? " AND fence = ? AND expires_at > " + sql.now : "")
				+ " RETURNING 1), live AS (SELECT MAX(expires_at) AS m FROM " + sql.readers
				+ " WHERE name = ? AND owner <> ? AND expires_at > " + sql.now + "), u AS (UPDATE " + sql.table
				+ " t SET owner = CASE WHEN live.m IS NULL THEN NULL ELSE t.owner END, expires_at = COALESCE(live.m, "
				+ sql.now + ") FROM live WHERE t.name = ? AND t.owner = ? AND EXISTS (SELECT 1 FROM d)"
				+ " RETURNING t.owner IS NULL AND t.waited AS woken" + notify + ")"
				+ " SELECT (SELECT COUNT(*) FROM d), (SELECT woken FROM u)";
	}

	/**
	 * One read attempt: the token if taken; otherwise the micros until the writer's lease
	 * or the intent in the way ends, or {@code retry} when the key has no row yet.
	 */
	JdbcReadWriteLocks.Taken take(Connection connection, String key, String owner, long leaseMicros, boolean waiting,
			long retry) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(waiting ? this.takeWaiting : this.take)) {
			FamilySql.bind(statement, key, key, owner, leaseMicros, key, FamilySql.READERS, FamilySql.READERS,
					FamilySql.READERS, FamilySql.READERS, key, owner);
			if (waiting) {
				FamilySql.bindFrom(statement, 12, key, key, owner);
			}
			statement.execute();
			String holder;
			long remaining;
			long intent;
			try (ResultSet row = statement.getResultSet()) {
				if (!row.next()) {
					return new JdbcReadWriteLocks.Taken(false, retry);
				}
				holder = row.getString(1);
				remaining = row.getLong(2);
				intent = row.getLong(3);
			}
			statement.getMoreResults();
			try (ResultSet taken = statement.getResultSet()) {
				if (taken.next()) {
					return new JdbcReadWriteLocks.Taken(true, taken.getLong(1));
				}
			}
			boolean writer = holder != null && !FamilySql.READERS.equals(holder) && remaining > 0;
			return new JdbcReadWriteLocks.Taken(false, writer ? remaining : Math.max(1, intent));
		}
	}

	/**
	 * Drops one read hold ({@code fence} null: whatever its lease, for an undo); see
	 * {@link #dropStatements}.
	 */
	JdbcReadWriteLocks.Released release(Connection connection, String key, String owner, @Nullable Long fence)
			throws SQLException {
		FamilySql sql = this.sql;
		try (PreparedStatement statement = connection.prepareStatement((fence != null) ? this.release : this.undo)) {
			int next = FamilySql.bindFrom(statement, 1, key, key, owner);
			if (fence != null) {
				next = FamilySql.bindFrom(statement, next, fence);
			}
			next = FamilySql.bindFrom(statement, next, key, owner, key, FamilySql.READERS);
			if (sql.channel != null) {
				FamilySql.bindFrom(statement, next, sql.channel);
			}
			statement.execute();
			try (ResultSet row = statement.getResultSet()) {
				if (!row.next()) {
					return JdbcReadWriteLocks.Released.NOT_HELD;
				}
			}
			statement.getMoreResults();
			try (ResultSet result = statement.getResultSet()) {
				result.next();
				if (result.getLong(1) == 0) {
					return JdbcReadWriteLocks.Released.NOT_HELD;
				}
				return result.getBoolean(2) ? JdbcReadWriteLocks.Released.LAST_TO_WAITERS
						: JdbcReadWriteLocks.Released.RELEASED;
			}
		}
	}

}
