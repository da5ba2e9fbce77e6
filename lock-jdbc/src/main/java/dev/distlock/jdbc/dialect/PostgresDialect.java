package dev.distlock.jdbc.dialect;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * PostgreSQL: every operation is one statement. Acquire is an {@code INSERT ... ON
 * CONFLICT DO UPDATE ... WHERE} that takes a free or expired row and returns the new
 * fence; a release of a row marked as waited on sends {@code pg_notify} in the same
 * statement, delivered when it commits. Time is {@code clock_timestamp()}: {@code now()}
 * would be the start of the transaction.
 */
final class PostgresDialect extends JdbcLockDialect {

	private static final String NOW_MICROS = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

	private static final String HELD = " WHERE name = ? AND owner = ? AND fence = ? AND expires_at > clock_timestamp()";

	private final Map<String, Sql> sql = new ConcurrentHashMap<>();

	PostgresDialect() {
		super("postgresql");
	}

	@Override
	Common common(String table) {
		return Common.of(table,
				"UPDATE " + table + " SET expires_at = clock_timestamp() + ? * interval '1 microsecond'" + HELD,
				"UPDATE " + table + " SET owner = NULL, expires_at = clock_timestamp() WHERE name = ? AND owner = ?",
				"DELETE FROM " + table + " WHERE expires_at < clock_timestamp() - ? * interval '1 microsecond'"
						+ " AND fence < " + NOW_MICROS,
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
		try (PreparedStatement statement = connection.prepareStatement(sql.acquire)) {
			statement.setString(1, key);
			statement.setString(2, owner);
			statement.setLong(3, tokens - 1L);
			statement.setLong(4, leaseMicros);
			statement.setLong(5, tokens - 1L);
			try (ResultSet result = statement.executeQuery()) {
				if (result.next()) {
					return Acquire.taken(result.getLong(1), tokens);
				}
			}
		}
		try (PreparedStatement statement = connection.prepareStatement(waiting ? sql.markWaited : sql.remaining)) {
			statement.setString(1, key);
			try (ResultSet result = statement.executeQuery()) {
				// A row gone in between (swept) is free: try again at once.
				return result.next() ? Acquire.busy(result.getLong(1), result.getBoolean(2)) : Acquire.busy(1, false);
			}
		}
	}

	@Override
	public boolean[] renewAll(Connection connection, String table, List<Lease> leases) throws SQLException {
		int size = leases.size();
		String[] keys = new String[size];
		String[] owners = new String[size];
		Long[] fences = new Long[size];
		Long[] micros = new Long[size];
		for (int i = 0; i < size; i++) {
			Lease lease = leases.get(i);
			keys[i] = lease.key();
			owners[i] = lease.owner();
			fences[i] = lease.fence();
			micros[i] = lease.leaseMicros();
		}
		boolean[] renewed = new boolean[size];
		Map<String, Integer> index = new HashMap<>();
		for (int i = 0; i < size; i++) {
			index.put(owners[i], i);
		}
		try (PreparedStatement statement = connection.prepareStatement(sql(table).renewAll)) {
			Array[] arrays = { connection.createArrayOf("text", keys), connection.createArrayOf("text", owners),
					connection.createArrayOf("bigint", fences), connection.createArrayOf("bigint", micros) };
			for (int i = 0; i < arrays.length; i++) {
				statement.setArray(i + 1, arrays[i]);
			}
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					Integer at = index.get(result.getString(1));
					if (at != null) {
						renewed[at] = true;
					}
				}
			}
		}
		return renewed;
	}

	@Override
	public Release release(Connection connection, String table, String key, String owner, long fence,
			@Nullable String channel) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql(table).release)) {
			statement.setString(1, key);
			statement.setString(2, owner);
			statement.setLong(3, fence);
			statement.setString(4, (channel != null) ? channel : releaseChannel(table));
			try (ResultSet result = statement.executeQuery()) {
				if (!result.next()) {
					return Release.NOT_HELD;
				}
				return result.getBoolean(1) ? Release.RELEASED_TO_WAITERS : Release.RELEASED;
			}
		}
	}

	/** distlock_ + the table's name: one channel for every key of the table. */
	@Override
	public String releaseChannel(String table) {
		return "distlock_" + table.replace('.', '_').toLowerCase(Locale.ROOT);
	}

	/** The statements for one table. */
	private static final class Sql {

		final String acquire;

		final String remaining;

		final String markWaited;

		final String renewAll;

		final String release;

		Sql(String table) {
			// The fence moves past the block: max(fence + 1, clock) + (tokens - 1).
			this.acquire = "INSERT INTO " + table + " AS l (name, owner, fence, expires_at) VALUES (?, ?, " + NOW_MICROS
					+ " + ?, clock_timestamp() + ? * interval '1 microsecond') ON CONFLICT (name) DO UPDATE SET"
					+ " owner = EXCLUDED.owner, fence = GREATEST(l.fence + 1 + ?, EXCLUDED.fence),"
					+ " expires_at = EXCLUDED.expires_at, waited = FALSE"
					+ " WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner"
					+ " RETURNING l.fence";
			String remainingMicros = "(extract(epoch FROM expires_at - clock_timestamp()) * 1000000)::bigint";
			// The second column: whether readers hold the key (read-write locks' owner).
			String readers = ", owner IS NOT NULL AND owner = '#readers'";
			this.remaining = "SELECT " + remainingMicros + readers + " FROM " + table + " WHERE name = ?";
			this.markWaited = "UPDATE " + table + " SET waited = TRUE WHERE name = ? RETURNING " + remainingMicros
					+ readers;
			// Rows locked in key order, as a multi-key acquisition locks them: in the
			// join's order, a renewal and an acquisition of overlapping keys could each
			// hold a row the other waits for.
			this.renewAll = "UPDATE " + table + " AS l SET expires_at = clock_timestamp() + s.lease * interval"
					+ " '1 microsecond' FROM (SELECT t.name, v.lease FROM " + table + " t JOIN unnest(?::text[],"
					+ " ?::text[], ?::bigint[], ?::bigint[]) AS v(name, owner, fence, lease) ON t.name = v.name"
					+ " AND t.owner = v.owner AND t.fence = v.fence WHERE t.expires_at > clock_timestamp()"
					+ " ORDER BY t.name FOR UPDATE OF t) s WHERE l.name = s.name RETURNING l.owner";
			// The row keeps its fence; pg_notify is sent on commit, only if someone
			// waits. The first column tells whether someone did.
			this.release = "UPDATE " + table + " SET owner = NULL, expires_at = clock_timestamp()" + HELD
					+ " RETURNING waited, CASE WHEN waited THEN pg_notify(?, name) END IS NULL";
		}

	}

}
