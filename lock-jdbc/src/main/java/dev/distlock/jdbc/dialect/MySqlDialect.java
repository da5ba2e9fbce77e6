package dev.distlock.jdbc.dialect;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * MariaDB and MySQL 8. Neither has {@code UPDATE ... RETURNING} (MySQL has no
 * {@code RETURNING} at all), so acquire is an {@code UPDATE} of a free or expired row
 * that hands the new fence back through {@code LAST_INSERT_ID(expr)} (read from the
 * reply's OK packet by the driver, with no second statement); a key with no row yet is
 * inserted with {@code INSERT IGNORE} (a second statement, once per key). Time is
 * {@code UTC_TIMESTAMP(6)} stored in {@code DATETIME(6)}, so no session time zone takes
 * part; the clock in microseconds is {@code TIMESTAMPDIFF} from the epoch, not
 * {@code UNIX_TIMESTAMP}, which reads its argument in the session's zone.
 *
 * <p>
 * A batch renewal is one multi-table {@code UPDATE}; only when it renews fewer rows than
 * asked does a {@code SELECT} find out which. These databases have no release signal:
 * waiters poll, with jittered backoff. A waiting attempt that finds the lock busy marks
 * the row instead of reading it ({@code waited}, in one {@code UPDATE} that hands the
 * remaining lease back through {@code LAST_INSERT_ID}), and the release reports the mark
 * the same way, so that a JVM handing the lock over locally lets that waiter in.
 */
final class MySqlDialect extends JdbcLockDialect {

	private static final String NOW = "UTC_TIMESTAMP(6)";

	private static final String NOW_MICROS = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', " + NOW + ")";

	private static final String HELD = " WHERE name = ? AND owner = ? AND fence = ? AND expires_at > " + NOW;

	private final Map<String, Sql> sql = new ConcurrentHashMap<>();

	MySqlDialect(String name) {
		super(name);
	}

	@Override
	Common common(String table) {
		return Common.of(table,
				"UPDATE " + table + " SET expires_at = TIMESTAMPADD(MICROSECOND, ?, " + NOW + ")" + HELD,
				"UPDATE " + table + " SET owner = NULL, expires_at = " + NOW + " WHERE name = ? AND owner = ?",
				"DELETE FROM " + table + " WHERE expires_at < TIMESTAMPADD(MICROSECOND, -?, " + NOW + ") AND fence < "
						+ NOW_MICROS,
				HELD);
	}

	@Override
	String nowMicros() {
		return NOW_MICROS;
	}

	private Sql sql(String table) {
		return this.sql.computeIfAbsent(table, Sql::new);
	}

	@Override
	public Acquire acquire(Connection connection, String table, String key, String owner, long leaseMicros,
			boolean waiting, int tokens) throws SQLException {
		Sql sql = sql(table);
		try (PreparedStatement statement = connection.prepareStatement(sql.takeFree, Statement.RETURN_GENERATED_KEYS)) {
			statement.setString(1, owner);
			statement.setLong(2, tokens - 1L);
			statement.setLong(3, leaseMicros);
			statement.setString(4, key);
			statement.setString(5, owner);
			if (statement.executeUpdate() == 1) {
				return Acquire.taken(fence(statement), tokens);
			}
		}
		try (PreparedStatement statement = connection.prepareStatement(sql.insert, Statement.RETURN_GENERATED_KEYS)) {
			statement.setString(1, key);
			statement.setString(2, owner);
			statement.setLong(3, tokens - 1L);
			statement.setLong(4, leaseMicros);
			if (statement.executeUpdate() == 1) {
				return Acquire.taken(fence(statement), tokens);
			}
		}
		if (waiting) {
			// One statement marks the row and reads the remaining lease (through
			// LAST_INSERT_ID, at least 1); a row gone in between is free: try again.
			try (PreparedStatement statement = connection.prepareStatement(sql.markWaited,
					Statement.RETURN_GENERATED_KEYS)) {
				statement.setString(1, key);
				statement.executeUpdate();
				// Twice the remaining lease, plus 1 if readers hold the key.
				long marked = lastInsertId(statement);
				return Acquire.busy(marked >> 1, (marked & 1) == 1);
			}
		}
		try (PreparedStatement statement = connection.prepareStatement(sql.remaining)) {
			statement.setString(1, key);
			try (ResultSet result = statement.executeQuery()) {
				return Acquire.busy(result.next() ? result.getLong(1) : 1);
			}
		}
	}

	/**
	 * A key column with a collation other than a binary one (the shipped DDL's
	 * {@link #binaryCollation()}): the database's default is case-insensitive (and, on
	 * MySQL 8, accent-insensitive), so that keys the JVM tells apart would be one row.
	 */
	@Override
	public @Nullable String keyColumnProblem(Connection connection, String table) throws SQLException {
		int dot = table.indexOf('.');
		try (PreparedStatement statement = connection.prepareStatement("SELECT COLLATION_NAME FROM"
				+ " information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?"
				+ " AND COLUMN_NAME = 'name'")) {
			statement.setString(1, (dot > 0) ? table.substring(0, dot) : null);
			statement.setString(2, (dot > 0) ? table.substring(dot + 1) : table);
			try (ResultSet result = statement.executeQuery()) {
				String collation = result.next() ? result.getString(1) : null;
				if (collation == null || collation.endsWith("_bin") || collation.equals("binary")) {
					return null;
				}
				return "its key column 'name' has the collation " + collation + ", which does not compare keys"
						+ " exactly (keys differing only in case, or on MySQL 8 in accents, would be one lock)."
						+ " Give it a binary collation: ALTER TABLE " + table + " MODIFY name VARCHAR(255)"
						+ " CHARACTER SET utf8mb4 COLLATE " + binaryCollation() + " NOT NULL";
			}
		}
	}

	/**
	 * The binary collation that also compares trailing spaces (NO PAD): MariaDB's
	 * {@code utf8mb4_nopad_bin}, MySQL 8's {@code utf8mb4_0900_bin}.
	 */
	private String binaryCollation() {
		return name().equals("mariadb") ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin";
	}

	private static long fence(Statement statement) throws SQLException {
		long fence = lastInsertId(statement);
		if (fence > 0) {
			return fence;
		}
		throw new SQLException("The driver returned no LAST_INSERT_ID() for the new fence");
	}

	/** The value the statement gave {@code LAST_INSERT_ID(expr)}, or 0 if none. */
	private static long lastInsertId(Statement statement) throws SQLException {
		try (ResultSet keys = statement.getGeneratedKeys()) {
			return keys.next() ? keys.getLong(1) : 0;
		}
	}

	@Override
	public boolean[] renewAll(Connection connection, String table, List<Lease> leases) throws SQLException {
		StringBuilder rows = new StringBuilder();
		for (int i = 0; i < leases.size(); i++) {
			rows.append(
					(i == 0) ? "SELECT ? AS name, ? AS owner, ? AS fence, ? AS lease" : " UNION ALL SELECT ?, ?, ?, ?");
		}
		String update = "UPDATE " + table + " l JOIN (" + rows + ") v ON l.name = v.name AND l.owner = v.owner"
				+ " AND l.fence = v.fence SET l.expires_at = TIMESTAMPADD(MICROSECOND, v.lease, " + NOW + ")"
				+ " WHERE l.expires_at > " + NOW;
		int updated;
		// In key order (the key column's binary collation orders by code point, as UTF-8
		// bytes do), so that the rows are locked in the order a multi-key acquisition
		// locks them: in another order, each could hold a row the other waits for.
		List<Lease> inKeyOrder = new ArrayList<>(leases);
		inKeyOrder.sort(Comparator.comparing((Lease lease) -> lease.key().getBytes(StandardCharsets.UTF_8),
				Arrays::compareUnsigned));
		try (PreparedStatement statement = connection.prepareStatement(update)) {
			int p = 1;
			for (Lease lease : inKeyOrder) {
				statement.setString(p++, lease.key());
				statement.setString(p++, lease.owner());
				statement.setLong(p++, lease.fence());
				statement.setLong(p++, lease.leaseMicros());
			}
			updated = statement.executeUpdate();
		}
		boolean[] renewed = new boolean[leases.size()];
		if (updated == leases.size()) {
			Arrays.fill(renewed, true);
			return renewed;
		}
		// Some were not ours any more: the renewed ones are those still held now.
		for (int i = 0; i < leases.size(); i++) {
			Lease lease = leases.get(i);
			try (PreparedStatement statement = connection.prepareStatement("SELECT 1 FROM " + table + HELD)) {
				statement.setString(1, lease.key());
				statement.setString(2, lease.owner());
				statement.setLong(3, lease.fence());
				try (ResultSet result = statement.executeQuery()) {
					renewed[i] = result.next();
				}
			}
		}
		return renewed;
	}

	@Override
	public Release release(Connection connection, String table, String key, String owner, long fence,
			@Nullable String channel) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql(table).release,
				Statement.RETURN_GENERATED_KEYS)) {
			statement.setString(1, key);
			statement.setString(2, owner);
			statement.setLong(3, fence);
			if (statement.executeUpdate() != 1) {
				return Release.NOT_HELD;
			}
			return (lastInsertId(statement) == 2) ? Release.RELEASED_TO_WAITERS : Release.RELEASED;
		}
	}

	/** The statements for one table. */
	private static final class Sql {

		final String takeFree;

		final String insert;

		final String remaining;

		final String markWaited;

		final String release;

		Sql(String table) {
			// SET runs left to right: the fence is computed from its old value.
			// The fence moves past the block: max(fence + 1, clock) + (tokens - 1).
			this.takeFree = "UPDATE " + table + " SET owner = ?, fence = LAST_INSERT_ID(GREATEST(fence + 1, "
					+ NOW_MICROS + ") + ?), expires_at = TIMESTAMPADD(MICROSECOND, ?, " + NOW + "), waited = FALSE"
					+ " WHERE name = ? AND (owner IS NULL OR expires_at <= " + NOW + " OR owner = ?)";
			this.insert = "INSERT IGNORE INTO " + table + " (name, owner, fence, expires_at, waited) VALUES (?, ?,"
					+ " LAST_INSERT_ID(" + NOW_MICROS + " + ?), TIMESTAMPADD(MICROSECOND, ?, " + NOW + "), FALSE)";
			this.remaining = "SELECT TIMESTAMPDIFF(MICROSECOND, " + NOW + ", expires_at) FROM " + table
					+ " WHERE name = ?";
			// Sets waited (the comparison is true) and returns twice the remaining lease,
			// plus 1 when readers (of read-write locks) hold the key.
			this.markWaited = "UPDATE " + table
					+ " SET waited = (LAST_INSERT_ID(2 * GREATEST(1, TIMESTAMPDIFF(MICROSECOND, " + NOW
					+ ", expires_at)) + (owner IS NOT NULL AND owner = '#readers')) > 0) WHERE name = ?";
			// waited is set to itself: its value + 1 comes back through LAST_INSERT_ID.
			this.release = "UPDATE " + table + " SET owner = NULL, expires_at = " + NOW
					+ ", waited = LAST_INSERT_ID(waited + 1) - 1" + HELD;
		}

	}

}
