package dev.distlock.jdbc;

/**
 * The SQL of the latch tables for one database. {@code
 *
<table>
 * _latch} holds one row per latch: its generation, count, participants still missing, the
 * previous generation and whether it opened, and when the latch expires; {@code
 *
<table>
 * _latch_participant} one row per participant counted in a generation, its primary key
 * making each participant count once. Every change locks the latch's row first
 * ({@code SELECT ... FOR UPDATE}), so that changes of one latch go one after another; a
 * row whose expiry has passed is a latch that is gone, kept so that the next generation
 * numbers above it.
 */
final class LatchStatements {

	private static final String STATE = "generation, latch_count, remaining, previous_generation, previous_opened";

	final SqlClock clock;

	/** Locks the latch's row, reading its state and whether it is live: name. */
	final String lockRow;

	/** Creates a latch's row if missing, already expired: name. */
	final String createRow;

	/** The state of a live latch: name. */
	final String state;

	/** Starts the expiry again: expiry micros, name. */
	final String touch;

	/**
	 * Arms a new generation, {@code max(generation + 1, clock)}, returning it
	 * (PostgreSQL) or handing it back through {@code LAST_INSERT_ID}: count, remaining,
	 * previous generation, previous opened, expiry micros, name.
	 */
	final String arm;

	/** Forgets the participants of generations before the given one: name, generation. */
	final String forget;

	/** Whether a participant was counted: name, generation, participant. */
	final String counted;

	/** Counts a participant: name, generation, participant. */
	final String count;

	/** One participant less missing, and the expiry again: expiry micros, name. */
	final String countDown;

	/** Deletes latches expired for longer than the given micros. */
	final String sweepLatches;

	/** Deletes participants of generations that are no longer a latch's. */
	final String sweepParticipants;

	LatchStatements(SqlClock clock, String table) {
		this.clock = clock;
		String latches = table + "_latch";
		String participants = table + "_latch_participant";
		// A row created empty (no count) is never live, whatever the clock says: a
		// locking read on MariaDB or MySQL compares with the time its statement began,
		// which can be before another caller created the row it waited for.
		this.lockRow = "SELECT " + STATE + ", CASE WHEN latch_count > 0 AND expires_at > " + clock.now
				+ " THEN 1 ELSE 0 END FROM " + latches + " WHERE name = ? FOR UPDATE";
		this.createRow = clock.insertIfAbsent(latches, "name, " + STATE + ", expires_at",
				"?, 0, 0, 0, 0, FALSE, " + clock.now);
		this.state = "SELECT " + STATE + " FROM " + latches + " WHERE name = ? AND latch_count > 0 AND expires_at > "
				+ clock.now;
		this.touch = "UPDATE " + latches + " SET expires_at = " + clock.plusMicros() + " WHERE name = ?";
		String next = "GREATEST(generation + 1, " + clock.nowMicros + ")";
		String rest = ", latch_count = ?, remaining = ?, previous_generation = ?, previous_opened = ?, expires_at = "
				+ clock.plusMicros() + " WHERE name = ?";
		// MySQL sets columns left to right: the generation is computed from its old
		// value.
		this.arm = clock.postgres ? "UPDATE " + latches + " SET generation = " + next + rest + " RETURNING generation"
				: "UPDATE " + latches + " SET generation = LAST_INSERT_ID(" + next + ")" + rest;
		this.forget = "DELETE FROM " + participants + " WHERE name = ? AND generation < ?";
		this.counted = "SELECT 1 FROM " + participants + " WHERE name = ? AND generation = ? AND participant = ?";
		this.count = "INSERT INTO " + participants + " (name, generation, participant) VALUES (?, ?, ?)";
		this.countDown = "UPDATE " + latches + " SET remaining = remaining - 1, expires_at = " + clock.plusMicros()
				+ " WHERE name = ?";
		this.sweepLatches = "DELETE FROM " + latches + " WHERE expires_at < " + clock.minusMicros();
		this.sweepParticipants = "DELETE FROM " + participants + " WHERE NOT EXISTS (SELECT 1 FROM " + latches
				+ " l WHERE l.name = " + participants + ".name AND l.generation = " + participants + ".generation)";
	}

}
