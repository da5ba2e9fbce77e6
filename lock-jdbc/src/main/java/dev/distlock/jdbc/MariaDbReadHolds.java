package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import org.jspecify.annotations.Nullable;

/**
 * Taking and dropping a read hold on MariaDB in one round trip each: the transaction that
 * {@link JdbcReadWriteLocks} runs statement by statement on MySQL is sent as one
 * anonymous compound statement ({@code BEGIN NOT ATOMIC ... END}), which MySQL lacks. The
 * statements and their order are the same: the first locks the key's row, and each later
 * one, at {@code READ COMMITTED}, reads what was committed before it began. Any error
 * rolls the transaction back before it reaches the caller, so the connection goes back to
 * the pool with no transaction open. A server that will not parse the blocks gets the
 * statements one by one instead ({@link BlockRefusals}).
 */
final class MariaDbReadHolds {

	/** Rolls back and reports any error of a block's statements. */
	static final String ON_ERROR = " DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;";

	/** Begins a block's transaction, at the level the other databases' statements use. */
	static final String BEGIN = " SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION;";

	/**
	 * A take: key, retry, readers, key, key, owner, lease, lease, readers, readers,
	 * lease, lease, key, whether to mark, key. Answers whether taken and the token, or
	 * the micros until the writer's lease or intent in the way ends, or the retry value
	 * when the key has no row.
	 */
	private final String take;

	/**
	 * A release: key, key, owner, fence (not for an undo), key, key, key, readers, key,
	 * readers. Answers 0 when the hold was not there, 1 when dropped, 2 when the last
	 * hold of a waited-on key was dropped.
	 */
	private final String release;

	private final String undo;

	MariaDbReadHolds(FamilySql sql) {
		String until = sql.microsUntil("expires_at");
		this.take = "BEGIN NOT ATOMIC DECLARE v_found INT DEFAULT 0; DECLARE v_holder VARCHAR(255);"
				+ " DECLARE v_fence, v_remaining, v_now, v_intent, v_answer BIGINT; DECLARE v_live, v_taken INT DEFAULT 0;"
				+ ON_ERROR + BEGIN + " SELECT 1, owner, fence, " + until + ", " + sql.nowMicros
				+ " INTO v_found, v_holder, v_fence, v_remaining, v_now FROM " + sql.table
				+ " WHERE name = ? FOR UPDATE; IF v_found = 0 THEN SET v_answer = ?;"
				+ " ELSEIF v_holder IS NOT NULL AND v_holder <> ? AND v_remaining > 0 THEN SET v_answer = v_remaining;"
				+ " ELSE SELECT MAX(" + until + ") INTO v_intent FROM " + sql.intents
				+ " WHERE name = ? AND expires_at > " + sql.now + "; IF v_intent > 0 THEN SET v_answer = v_intent; ELSE"
				// The read row first: the lock row's lease, set after it, is never
				// shorter.
				+ " SET v_answer = GREATEST(v_fence + 1, v_now); SET v_taken = 1; INSERT INTO " + sql.readers
				+ " (name, owner, fence, expires_at) VALUES (?, ?, v_answer, " + sql.after("?")
				+ ") ON DUPLICATE KEY UPDATE fence = v_answer, expires_at = " + sql.after("?") + ";"
				+ " SET v_live = (v_holder = ? AND v_remaining > 0); UPDATE " + sql.table
				+ " SET owner = ?, fence = v_answer, expires_at = IF(v_live, GREATEST(expires_at, " + sql.after("?")
				+ "), " + sql.after("?") + "), waited = IF(v_live, waited, FALSE) WHERE name = ?; END IF; END IF;"
				+ " IF v_taken = 0 AND v_found = 1 AND ? THEN UPDATE " + sql.table
				+ " SET waited = TRUE WHERE name = ?; END IF; COMMIT; SELECT v_taken, v_answer; END";
		this.release = dropBlock(sql, true);
		this.undo = dropBlock(sql, false);
	}

	private static String dropBlock(FamilySql sql, boolean checkFence) {
		return "BEGIN NOT ATOMIC DECLARE v_waited INT DEFAULT NULL; DECLARE v_result INT DEFAULT 0;" + ON_ERROR + BEGIN
				+ " SELECT IF(waited, 1, 0) INTO v_waited FROM " + sql.table
				+ " WHERE name = ? FOR UPDATE; DELETE FROM " + sql.readers + " WHERE name = ? AND owner = ?"
				+ (checkFence ? " AND fence = ? AND expires_at > " + sql.now : "")
				+ "; IF ROW_COUNT() > 0 AND v_waited IS NOT NULL THEN IF EXISTS (SELECT 1 FROM " + sql.readers
				+ " WHERE name = ? AND expires_at > " + sql.now + ") THEN UPDATE " + sql.table
				+ " SET expires_at = COALESCE((SELECT MAX(r.expires_at) FROM " + sql.readers
				+ " r WHERE r.name = ? AND r.expires_at > " + sql.now + "), " + sql.now
				+ ") WHERE name = ? AND owner = ?; SET v_result = 1; ELSE UPDATE " + sql.table
				+ " SET owner = NULL, expires_at = " + sql.now + " WHERE name = ? AND owner = ?;"
				+ " SET v_result = IF(ROW_COUNT() = 1 AND v_waited = 1, 2, 1); END IF; END IF; COMMIT;"
				+ " SELECT v_result; END";
	}

	/**
	 * One read attempt: the token if taken; otherwise the micros until the writer's lease
	 * or the intent in the way ends, or {@code retry} when the key has no row yet.
	 */
	JdbcReadWriteLocks.Taken take(Connection connection, String key, String owner, long leaseMicros, boolean waiting,
			long retry) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(this.take)) {
			FamilySql.bind(statement, key, retry, FamilySql.READERS, key, key, owner, leaseMicros, leaseMicros,
					FamilySql.READERS, FamilySql.READERS, leaseMicros, leaseMicros, key, waiting, key);
			try (ResultSet row = answer(statement)) {
				return new JdbcReadWriteLocks.Taken(row.getInt(1) == 1, row.getLong(2));
			}
		}
	}

	/**
	 * Drops one read hold ({@code fence} null: whatever its lease, for an undo); the last
	 * one frees the key.
	 */
	JdbcReadWriteLocks.Released release(Connection connection, String key, String owner, @Nullable Long fence)
			throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement((fence != null) ? this.release : this.undo)) {
			int next = FamilySql.bindFrom(statement, 1, key, key, owner);
			if (fence != null) {
				next = FamilySql.bindFrom(statement, next, fence);
			}
			FamilySql.bindFrom(statement, next, key, key, key, FamilySql.READERS, key, FamilySql.READERS);
			try (ResultSet row = answer(statement)) {
				return switch (row.getInt(1)) {
					case 0 -> JdbcReadWriteLocks.Released.NOT_HELD;
					case 1 -> JdbcReadWriteLocks.Released.RELEASED;
					default -> JdbcReadWriteLocks.Released.LAST_TO_WAITERS;
				};
			}
		}
	}

	/** The one row a block answers with, positioned on it. */
	static ResultSet answer(PreparedStatement block) throws SQLException {
		if (!block.execute()) {
			throw new SQLException("A compound statement returned no answer");
		}
		ResultSet row = block.getResultSet();
		if (!row.next()) {
			row.close();
			throw new SQLException("A compound statement returned an empty answer");
		}
		return row;
	}

}
