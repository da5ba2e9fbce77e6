package dev.distlock.jdbc;

/**
 * The guard of a PostgreSQL round trip whose first statement locks a key's row and whose
 * later statements may act only under that lock.
 *
 * <p>
 * Each later statement reads a snapshot newer than the first one's. When the first found
 * no row (the key's first use, or a row deleted while the statement waited for its lock),
 * a row created in between is visible to the later ones although nothing locked it: what
 * they counted would be guarded by no lock, and what they wrote would go unreported, as
 * the round trip answers that the row is missing. So the first statement marks its
 * transaction with the name of the row it was granted, and the later ones act only on the
 * row that the mark names. The mark is local to the transaction.
 */
final class PostgresLockedRow {

	private static final String MARK = "distlock.locked_row";

	private PostgresLockedRow() {
	}

	/**
	 * Locks the row of {@code table} named by the statement's last parameter, answering
	 * {@code columns} (other parameters of theirs first), and marks the transaction.
	 */
	static String lock(String columns, String table) {
		return lock(columns, table, "");
	}

	/**
	 * As {@link #lock}, but answers no row and leaves the transaction unmarked when
	 * another transaction holds the row's lock, instead of waiting for it.
	 */
	static String lockOrSkip(String columns, String table) {
		return lock(columns, table, " SKIP LOCKED");
	}

	private static String lock(String columns, String table, String ifLocked) {
		// Materialized, so that the mark is set only for a row whose lock was granted.
		return "WITH locked AS MATERIALIZED (SELECT " + columns + ", name AS locked_name FROM " + table
				+ " WHERE name = ? FOR UPDATE" + ifLocked + ") SELECT *, set_config('" + MARK
				+ "', locked_name, TRUE) FROM locked";
	}

	/**
	 * A condition true only in a transaction whose first statement locked the row whose
	 * name is {@code nameColumn}.
	 */
	static String locked(String nameColumn) {
		return "current_setting('" + MARK + "', TRUE) = " + nameColumn;
	}

	/** The negation of {@link #locked}, true also when the transaction has no mark. */
	static String notLocked(String nameColumn) {
		return "current_setting('" + MARK + "', TRUE) IS DISTINCT FROM " + nameColumn;
	}

}
