package dev.distlock.jdbc;

import org.jspecify.annotations.Nullable;

/**
 * The SQL of the semaphore tables for one database. {@code
 *
<table>
 * _semaphore} holds one row per semaphore: its permit count, its fence (the last token
 * issued, only rising) and whether a waiter marked it; {@code
 *
<table>
 * _permit} one row per held permit, with its own owner and lease. Taking a permit locks
 * the semaphore's row ({@code SELECT ... FOR
 * UPDATE}) and then counts the live permits, so that takers of one semaphore go one after
 * another and each counts what the one before it committed: on PostgreSQL every statement
 * of a read-committed transaction sees what was committed before it began, and on MariaDB
 * and MySQL the count is a locking read ({@code LOCK IN SHARE MODE}), which reads the
 * latest committed rows whatever the isolation level.
 */
final class SemaphoreStatements {

	final SqlClock clock;

	/** Locks the semaphore's row, reading its count: name. */
	final String lockRow;

	/** Creates the semaphore's row if missing, with no permit held: name, permits. */
	final String createRow;

	/**
	 * The live permits and the microseconds until the first of them runs out: name.
	 */
	final String live;

	/** Marks the semaphore as waited on: name. */
	final String markWaited;

	/**
	 * Stores the count and raises the fence to {@code max(fence + 1, clock)}, returning
	 * it (PostgreSQL) or handing it back through {@code LAST_INSERT_ID}: permits, name.
	 */
	final String raiseFence;

	/** Adds a permit, unless its owner has it: name, owner, fence, lease micros. */
	final String addPermit;

	/** The fence of a live permit of an owner: name, owner. */
	final String heldFence;

	/** Extends a live permit of an owner: lease micros, name, owner, fence. */
	final String renew;

	/**
	 * Frees a live permit of an owner: name, owner, fence. On PostgreSQL two statements
	 * in one round trip: lock the semaphore's row unless a taker holds it (name), then
	 * free the permit (name, owner, fence) and notify the channel when the row was locked
	 * and a waiter had marked it (clearing the mark), or when the row was not locked.
	 */
	final String release;

	/**
	 * The count of some semaphores, their live permits and the highest fence among those,
	 * for {@link PollingSignals}: {@code ?} stands for the names' placeholders.
	 */
	final String poll;

	/**
	 * On MariaDB, a whole take as one compound statement, the statements above in one
	 * transaction: name, whether a run again, name, owner, name, permits, permits,
	 * permits, name, name, name, owner, lease micros. Answers a kind (0 busy, 1 taken, 2
	 * taken with another count, 3 no row yet) and a value (the micros until the first
	 * live permit runs out, the fence, or the other count). Null elsewhere.
	 */
	final @Nullable String takeBlock;

	/**
	 * On PostgreSQL, a first run of a take as the statements of one round trip, run as
	 * one implicit transaction: lock the semaphore's row and read its count (name); count
	 * the live permits and, when one is free, raise the fence and add the permit (name,
	 * permits, name, permits, permits, name, owner, lease micros), answering the new
	 * permit's fence, the fence raised, the live permits and the micros until the first
	 * of them runs out. {@link #takeTogetherWaiting} then marks the semaphore as waited
	 * on unless the permit was added (name, name, owner). Null elsewhere.
	 */
	final @Nullable String takeTogether;

	/** {@link #takeTogether} for a taker that will wait. Null but on PostgreSQL. */
	final @Nullable String takeTogetherWaiting;

	/** Frees a permit of an owner whatever its lease (an undo): name, owner. */
	final String undo;

	/** Deletes permits whose lease ran out. */
	final String sweepPermits;

	/**
	 * Deletes semaphores without permits whose last permit was taken more than the given
	 * micros ago (a semaphore taken again starts its fence at the clock).
	 */
	final String sweepSemaphores;

	SemaphoreStatements(SqlClock clock, boolean mariadb, String table) {
		this.clock = clock;
		String semaphores = table + "_semaphore";
		String permits = table + "_permit";
		String live = " WHERE name = ? AND owner = ? AND fence = ? AND expires_at > " + clock.now;
		this.lockRow = "SELECT permits FROM " + semaphores + " WHERE name = ? FOR UPDATE";
		this.createRow = clock.insertIfAbsent(semaphores, "name, permits, fence, waited", "?, ?, 0, FALSE");
		this.live = "SELECT COUNT(*), COALESCE(MIN(" + clock.microsUntil("expires_at") + "), 0) FROM " + permits
				+ " WHERE name = ? AND expires_at > " + clock.now + (clock.postgres ? "" : " LOCK IN SHARE MODE");
		this.markWaited = "UPDATE " + semaphores + " SET waited = TRUE WHERE name = ?";
		String raised = "GREATEST(fence + 1, " + clock.nowMicros + ")";
		this.raiseFence = clock.postgres
				? "UPDATE " + semaphores + " SET permits = ?, fence = " + raised + " WHERE name = ? RETURNING fence"
				: "UPDATE " + semaphores + " SET permits = ?, fence = LAST_INSERT_ID(" + raised + ") WHERE name = ?";
		this.addPermit = clock.insertIfAbsent(permits, "name, owner, fence, expires_at",
				"?, ?, ?, " + clock.plusMicros());
		this.heldFence = "SELECT fence FROM " + permits + " WHERE name = ? AND owner = ? AND expires_at > " + clock.now;
		this.renew = "UPDATE " + permits + " SET expires_at = " + clock.plusMicros() + live;
		// On PostgreSQL the release first locks the semaphore's row unless a taker holds
		// it. Locked, it sees every mark made by a taker that counted the permit as live
		// (that taker has committed), and a later taker counts after it commits; so it
		// notifies only when marked. Skipped, a taker may be counting the permit as live
		// right now and mark the row after the release's snapshot: the release notifies
		// whatever the mark says, and leaves the mark for the next release. Either way it
		// never waits for a taker.
		this.release = clock.postgres ? PostgresLockedRow.lockOrSkip("1 AS one", semaphores)
				+ "; WITH freed AS (DELETE FROM " + permits + live + " RETURNING name), cleared AS (UPDATE "
				+ semaphores + " s SET waited = FALSE FROM freed WHERE s.name = freed.name AND "
				+ PostgresLockedRow.locked("s.name") + " AND s.waited RETURNING s.name), signalled AS (SELECT"
				+ " pg_notify(?, freed.name) FROM freed WHERE " + PostgresLockedRow.notLocked("freed.name")
				+ " OR EXISTS (SELECT 1 FROM cleared)) SELECT (SELECT COUNT(*) FROM freed),"
				+ " (SELECT COUNT(*) FROM signalled)" : "DELETE FROM " + permits + live;
		this.poll = "SELECT s.name, s.permits, COUNT(p.owner), COALESCE(MAX(p.fence), 0) FROM " + semaphores
				+ " s LEFT JOIN " + permits + " p ON p.name = s.name AND p.expires_at > " + clock.now
				+ " WHERE s.name IN (?) GROUP BY s.name, s.permits";
		this.takeBlock = mariadb ? takeBlock(clock, semaphores, permits) : null;
		if (clock.postgres) {
			// At READ COMMITTED each statement reads what was committed before it
			// began, so the count, made after the row lock is granted, sees every
			// permit committed by the takers before this one.
			this.takeTogether = PostgresLockedRow.lock("permits", semaphores)
					+ "; WITH l AS (SELECT COUNT(*) AS live, COALESCE(MIN(" + clock.microsUntil("expires_at")
					+ "), 0) AS first FROM " + permits + " WHERE name = ?" + " AND expires_at > " + clock.now
					+ "), f AS (UPDATE " + semaphores + " s SET permits = ?," + " fence = GREATEST(s.fence + 1, "
					+ clock.nowMicros + ") FROM l WHERE s.name = ? AND " + PostgresLockedRow.locked("s.name")
					+ " AND l.live < ? AND (l.live = 0 OR s.permits = ?) RETURNING s.fence), p AS (INSERT INTO "
					+ permits + " (name, owner, fence, expires_at) SELECT ?, ?, f.fence, " + clock.plusMicros()
					+ " FROM f ON CONFLICT DO NOTHING RETURNING fence) SELECT (SELECT fence FROM p),"
					+ " (SELECT fence FROM f), l.live, l.first FROM l";
			this.takeTogetherWaiting = this.takeTogether + "; UPDATE " + semaphores + " SET waited = TRUE"
					+ " WHERE name = ? AND NOT EXISTS (SELECT 1 FROM " + permits + " WHERE name = ? AND owner = ?)";
		}
		else {
			this.takeTogether = null;
			this.takeTogetherWaiting = null;
		}
		this.undo = "DELETE FROM " + permits + " WHERE name = ? AND owner = ?";
		this.sweepPermits = "DELETE FROM " + permits + " WHERE expires_at <= " + clock.now;
		this.sweepSemaphores = "DELETE FROM " + semaphores + " WHERE fence < " + clock.nowMicros + " - ?"
				+ " AND NOT EXISTS (SELECT 1 FROM " + permits + " p WHERE p.name = " + semaphores + ".name)";
	}

	private static String takeBlock(SqlClock clock, String semaphores, String permits) {
		return "BEGIN NOT ATOMIC DECLARE v_declared INT DEFAULT NULL; DECLARE v_mine, v_live, v_first, v_fence BIGINT"
				+ " DEFAULT NULL; DECLARE v_kind INT DEFAULT 0; DECLARE v_value BIGINT DEFAULT 0;"
				+ MariaDbReadHolds.ON_ERROR + " START TRANSACTION; SELECT permits INTO v_declared FROM " + semaphores
				+ " WHERE name = ? FOR UPDATE; IF v_declared IS NULL THEN SET v_kind = 3; ELSE"
				// A run again: the first may have committed this owner's permit
				// before its reply was lost.
				+ " IF ? THEN SELECT fence INTO v_mine FROM " + permits
				+ " WHERE name = ? AND owner = ? AND expires_at > " + clock.now
				+ "; END IF; IF v_mine IS NOT NULL THEN SET v_kind = 1, v_value = v_mine;"
				+ " ELSE SELECT COUNT(*), COALESCE(MIN(" + clock.microsUntil("expires_at")
				+ "), 0) INTO v_live, v_first" + " FROM " + permits + " WHERE name = ? AND expires_at > " + clock.now
				+ " LOCK IN SHARE MODE;"
				+ " IF v_live > 0 AND v_declared <> ? THEN SET v_kind = 2, v_value = v_declared;"
				+ " ELSEIF v_live >= ? THEN SET v_kind = 0, v_value = v_first; ELSE UPDATE " + semaphores
				+ " SET permits = ?, fence = GREATEST(fence + 1, " + clock.nowMicros + ") WHERE name = ?;"
				+ " SELECT fence INTO v_fence FROM " + semaphores + " WHERE name = ?; INSERT IGNORE INTO " + permits
				+ " (name, owner, fence, expires_at) VALUES (?, ?, v_fence, " + clock.plusMicros() + ");"
				// Only this attempt's owner can be there: a run before it, whose permit
				// ran out.
				+ " IF ROW_COUNT() <> 1 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'A permit of this attempt''s"
				+ " owner ran out before the attempt could answer'; END IF; SET v_kind = 1, v_value = v_fence; END IF;"
				+ " END IF; END IF; COMMIT; SELECT v_kind, v_value; END";
	}

}
