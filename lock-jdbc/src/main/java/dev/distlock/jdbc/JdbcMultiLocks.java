package dev.distlock.jdbc;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import org.jspecify.annotations.Nullable;

/**
 * Multi-key locks of the JDBC store: every key is the plain lock's row, taken as a plain
 * acquire takes it (a free or expired row gets a fresh owner, of its own per key, and its
 * fence rises to {@code max(fence + 1, clock)}), all in one transaction that commits only
 * if every key was taken. So a multi-key lock and a plain lock, or a reader, of one key
 * exclude each other, and the tokens of a key form one rising sequence whichever kind
 * took it.
 *
 * <p>
 * Rows are locked in key order, whoever asks: on PostgreSQL one
 * {@code INSERT ... SELECT ... ORDER BY name ON CONFLICT DO UPDATE} takes every key; on
 * MariaDB and MySQL a {@code SELECT ... ORDER BY name FOR UPDATE} locks the keys' rows
 * before they are written. Two callers whose key sets overlap thus wait for each other in
 * one order and never deadlock; nor does a batch renewal, which locks its rows in key
 * order too. A key found busy rolls the transaction back: nothing was written, and the
 * attempt answers busy with that key.
 */
final class JdbcMultiLocks {

	/** A first acquisition racing with another to create a row tries again. */
	private static final int MAX_TRIES = 4;

	private final JdbcLockProvider provider;

	private final JdbcCalls calls;

	private final JdbcMutexes mutexes;

	private volatile @Nullable FamilySql sql;

	JdbcMultiLocks(JdbcLockProvider provider, JdbcCalls calls, JdbcMutexes mutexes) {
		this.provider = provider;
		this.calls = calls;
		this.mutexes = mutexes;
	}

	private FamilySql sql() {
		FamilySql known = this.sql;
		if (known == null) {
			known = new FamilySql(this.provider.dialect(), this.provider.tableName());
			this.sql = known;
		}
		return known;
	}

	/**
	 * Every one of {@code keys} (distinct and sorted), or none: busy with the first key
	 * found held, which is marked as waited on when {@code waiting}.
	 */
	LockAttempt tryLockAll(List<String> keys, Duration leaseTime, boolean waiting) {
		keys.forEach(JdbcLockProvider::checkKey);
		FamilySql sql = sql();
		String base = this.provider.newOwner();
		List<String> owners = new ArrayList<>(keys.size());
		for (int i = 0; i < keys.size(); i++) {
			owners.add(base + "/" + i);
		}
		long leaseMicros = JdbcCalls.micros(leaseTime);
		long undoUntil = System.nanoTime() + leaseTime.toNanos() + this.calls.timeout().toNanos();
		Outcome outcome = this.calls.call(keys.get(0), "acquire the locks " + keys, (connection) -> {
			for (int attempt = 1;; attempt++) {
				try {
					Outcome taken = sql.inTransaction(connection,
							(tx) -> sql.postgres ? takePostgres(tx, sql, keys, owners, leaseMicros)
									: takeLocked(tx, sql, keys, owners, leaseMicros, waiting));
					return (taken.fences() == null && sql.postgres)
							? busyPostgres(connection, sql, Objects.requireNonNull(taken.busyKey()), waiting) : taken;
				}
				catch (SQLException ex) {
					// Another caller created one of the rows first: it is there now.
					if (attempt >= MAX_TRIES || ex.getSQLState() == null || !ex.getSQLState().startsWith("23")) {
						throw ex;
					}
				}
			}
		}, (late) -> {
			if (late == null || late.fences() != null) {
				undo(keys, owners, undoUntil);
			}
		});
		long[] fences = outcome.fences();
		if (fences == null) {
			return new LockAttempt.Busy(
					Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(Math.max(1, outcome.remaining()))),
					outcome.busyKey());
		}
		List<LockHandle> handles = new ArrayList<>(keys.size());
		for (int i = 0; i < keys.size(); i++) {
			handles.add(this.mutexes.handle(keys.get(i), owners.get(i), fences[i], fences[i]));
		}
		return new LockAttempt.AcquiredAll(handles);
	}

	/**
	 * One statement writes every free key, in key order; all or the transaction undone,
	 * answering the first key not taken.
	 */
	private static Outcome takePostgres(Connection connection, FamilySql sql, List<String> keys, List<String> owners,
			long leaseMicros) throws SQLException {
		Map<String, Long> taken = new HashMap<>();
		try (PreparedStatement statement = connection.prepareStatement("INSERT INTO " + sql.table
				+ " AS l (name, owner, fence, expires_at) SELECT v.name, v.owner, " + sql.nowMicros + ", "
				+ sql.after("?") + " FROM unnest(?::text[], ?::text[]) AS v(name, owner) ORDER BY v.name"
				+ " ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, fence = GREATEST(l.fence + 1,"
				+ " EXCLUDED.fence), expires_at = EXCLUDED.expires_at, waited = FALSE WHERE l.owner IS NULL"
				+ " OR l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner RETURNING l.name, l.fence")) {
			statement.setLong(1, leaseMicros);
			Array names = connection.createArrayOf("text", keys.toArray());
			Array ownerArray = connection.createArrayOf("text", owners.toArray());
			statement.setArray(2, names);
			statement.setArray(3, ownerArray);
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					taken.put(result.getString(1), result.getLong(2));
				}
			}
		}
		if (taken.size() == keys.size()) {
			long[] fences = new long[keys.size()];
			for (int i = 0; i < fences.length; i++) {
				fences[i] = taken.get(keys.get(i));
			}
			return Outcome.taken(fences);
		}
		connection.rollback();
		for (String key : keys) {
			if (!taken.containsKey(key)) {
				return new Outcome(null, 0, key);
			}
		}
		throw new IllegalStateException("unreachable");
	}

	/**
	 * The remaining lease of busy {@code key}, marked as waited on if {@code waiting}:
	 * one statement, on its own after the attempt's transaction. A holder that released
	 * the key since the attempt shows no lease left, and the waiter looks again at once.
	 */
	private static Outcome busyPostgres(Connection connection, FamilySql sql, String key, boolean waiting)
			throws SQLException {
		Long remaining = FamilySql.queryLong(connection,
				waiting ? "UPDATE " + sql.table + " SET waited = TRUE WHERE name = ? RETURNING "
						+ sql.microsUntil("expires_at")
						: "SELECT " + sql.microsUntil("expires_at") + " FROM " + sql.table + " WHERE name = ?",
				key);
		return new Outcome(null, (remaining != null) ? remaining : 1, key);
	}

	/**
	 * Locks the keys' rows in key order, then writes them if every one is free: missing
	 * rows inserted, existing ones updated, in two statements.
	 */
	private Outcome takeLocked(Connection connection, FamilySql sql, List<String> keys, List<String> owners,
			long leaseMicros, boolean waiting) throws SQLException {
		Map<String, long[]> rows = new HashMap<>();
		long now = lockRows(connection, sql, keys, owners, rows);
		if (rows.size() < keys.size()) {
			// Missing rows are created holding no lock, then every row is locked again.
			connection.rollback();
			sql.createRows(connection, keys.stream().filter((key) -> !rows.containsKey(key)).toList());
			rows.clear();
			now = lockRows(connection, sql, keys, owners, rows);
		}
		for (String key : keys) {
			long[] row = rows.get(key);
			if (row != null && row[1] == 1) {
				connection.rollback();
				return busy(connection, sql, key, waiting);
			}
		}
		if (rows.isEmpty()) {
			now = this.provider.dialect().clockMicros(connection);
		}
		return write(connection, sql, keys, owners, leaseMicros, rows, now);
	}

	/**
	 * Locks the rows of {@code keys} in key order and puts each row's fence and whether
	 * another owner holds it in {@code rows}.
	 * @return the database's clock in microseconds, 0 when no row was found
	 */
	private static long lockRows(Connection connection, FamilySql sql, List<String> keys, List<String> owners,
			Map<String, long[]> rows) throws SQLException {
		String in = placeholders(keys.size());
		long now;
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT name, owner, fence, " + sql.microsUntil("expires_at") + ", " + sql.nowMicros
					+ " FROM " + sql.table + " WHERE name IN (" + in + ") ORDER BY name FOR UPDATE")) {
			FamilySql.bind(statement, keys.toArray());
			try (ResultSet result = statement.executeQuery()) {
				now = 0;
				while (result.next()) {
					String owner = result.getString(2);
					long remaining = result.getLong(4);
					now = result.getLong(5);
					String key = result.getString(1);
					boolean mine = owners.get(keys.indexOf(key)).equals(owner);
					rows.put(key, new long[] { result.getLong(3), (owner != null && !mine && remaining > 0) ? 1 : 0 });
				}
			}
		}
		return now;
	}

	/**
	 * Writes every key, whose rows are locked and free: an update of the locked rows, and
	 * an insert of any row swept since it was created.
	 */
	private static Outcome write(Connection connection, FamilySql sql, List<String> keys, List<String> owners,
			long leaseMicros, Map<String, long[]> rows, long now) throws SQLException {
		long[] fences = new long[keys.size()];
		List<Object> inserts = new ArrayList<>();
		List<Object> updates = new ArrayList<>();
		for (int i = 0; i < keys.size(); i++) {
			long[] row = rows.get(keys.get(i));
			fences[i] = (row != null) ? Math.max(row[0] + 1, now) : now;
			List<Object> into = (row != null) ? updates : inserts;
			into.add(keys.get(i));
			into.add(owners.get(i));
			into.add(fences[i]);
		}
		if (!inserts.isEmpty()) {
			insert(connection, sql, leaseMicros, inserts);
		}
		if (!updates.isEmpty()) {
			update(connection, sql, leaseMicros, updates);
		}
		return Outcome.taken(fences);
	}

	/** Inserts the rows of {@code inserts} (key, owner, fence for each). */
	private static void insert(Connection connection, FamilySql sql, long leaseMicros, List<Object> inserts)
			throws SQLException {
		StringBuilder values = new StringBuilder();
		for (int i = 0; i < inserts.size() / 3; i++) {
			values.append((i == 0) ? "" : ", ")
				.append("(?, ?, ?, ")
				.append(sql.after(Long.toString(leaseMicros)))
				.append(", FALSE)");
		}
		FamilySql.update(connection,
				"INSERT INTO " + sql.table + " (name, owner, fence, expires_at, waited) VALUES " + values,
				inserts.toArray());
	}

	/**
	 * Takes the locked rows of {@code updates} (key, owner, fence for each) in one
	 * statement.
	 */
	private static void update(Connection connection, FamilySql sql, long leaseMicros, List<Object> updates)
			throws SQLException {
		// By key (the primary key's range), never a join a plan could run as a scan
		// that waits for other callers' rows.
		int count = updates.size() / 3;
		StringBuilder owner = new StringBuilder("CASE name");
		StringBuilder fence = new StringBuilder("CASE name");
		List<Object> parameters = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			owner.append(" WHEN ? THEN ?");
			parameters.add(updates.get(3 * i));
			parameters.add(updates.get(3 * i + 1));
		}
		for (int i = 0; i < count; i++) {
			fence.append(" WHEN ? THEN ?");
			parameters.add(updates.get(3 * i));
			parameters.add(updates.get(3 * i + 2));
		}
		parameters.add(leaseMicros);
		for (int i = 0; i < count; i++) {
			parameters.add(updates.get(3 * i));
		}
		FamilySql.update(connection,
				"UPDATE " + sql.table + " SET owner = " + owner + " END, fence = " + fence + " END, expires_at = "
						+ sql.after("?") + ", waited = FALSE WHERE name IN (" + placeholders(count) + ")",
				parameters.toArray());
	}

	/**
	 * The remaining lease of busy {@code key}, marked as waited on if {@code waiting}.
	 */
	private static Outcome busy(Connection connection, FamilySql sql, String key, boolean waiting) throws SQLException {
		if (waiting) {
			FamilySql.update(connection, "UPDATE " + sql.table + " SET waited = TRUE WHERE name = ?", key);
		}
		Long remaining = FamilySql.queryLong(connection,
				"SELECT " + sql.microsUntil("expires_at") + " FROM " + sql.table + " WHERE name = ?", key);
		return new Outcome(null, (remaining != null) ? remaining : 1, key);
	}

	/**
	 * Releases the handles of one multi-key acquisition, owner- and fence-checked per
	 * key: one statement on PostgreSQL (signalling the keys waited on), one transaction
	 * of two on MariaDB and MySQL. Each handle learns, as from its own release, whether a
	 * waiter had marked its row. A run again after a lost reply counts a key found free
	 * with its fence still the handle's as released by the earlier run, as a single
	 * release does.
	 */
	List<Boolean> releaseAll(List<LockHandle> handles) {
		FamilySql sql = sql();
		List<JdbcLockHandle> jdbc = new ArrayList<>(handles.size());
		handles.forEach((handle) -> jdbc.add((JdbcLockHandle) handle));
		String first = handles.get(0).key();
		AtomicInteger runs = new AtomicInteger();
		Map<String, Boolean> released = this.calls.call(first,
				"release " + handles.size() + " locks incl. '" + first + "'", (connection) -> {
					boolean rerun = runs.getAndIncrement() > 0;
					Map<String, Boolean> freed = sql.postgres ? releasePostgres(connection, sql, jdbc)
							: sql.inTransaction(connection, (tx) -> releaseLocked(tx, sql, jdbc));
					if (rerun) {
						for (JdbcLockHandle handle : jdbc) {
							if (!freed.containsKey(handle.key())) {
								JdbcLockDialect.Release earlier = this.provider.dialect()
									.releasedAt(connection, this.provider.tableName(), handle.key(), handle.fence);
								if (earlier.released()) {
									freed.put(handle.key(), earlier == JdbcLockDialect.Release.RELEASED_TO_WAITERS);
								}
							}
						}
					}
					return freed;
				}, null);
		List<Boolean> answers = new ArrayList<>(handles.size());
		for (JdbcLockHandle handle : jdbc) {
			Boolean waited = released.get(handle.key());
			handle.released((waited == null) ? JdbcLockDialect.Release.NOT_HELD
					: waited ? JdbcLockDialect.Release.RELEASED_TO_WAITERS : JdbcLockDialect.Release.RELEASED);
			answers.add(waited != null);
		}
		return answers;
	}

	/** The keys freed, each with whether a waiter had marked its row. */
	private static Map<String, Boolean> releasePostgres(Connection connection, FamilySql sql,
			List<JdbcLockHandle> handles) throws SQLException {
		int size = handles.size();
		Object[] names = new Object[size];
		Object[] owners = new Object[size];
		Object[] fences = new Object[size];
		for (int i = 0; i < size; i++) {
			names[i] = handles.get(i).key();
			owners[i] = handles.get(i).owner;
			fences[i] = handles.get(i).fence;
		}
		Map<String, Boolean> released = new HashMap<>();
		// Rows locked in key order, as an acquisition locks them.
		try (PreparedStatement statement = connection.prepareStatement("UPDATE " + sql.table + " l SET owner = NULL,"
				+ " expires_at = clock_timestamp() FROM (SELECT t.name FROM " + sql.table + " t JOIN unnest(?::text[],"
				+ " ?::text[], ?::bigint[]) AS v(name, owner, fence) ON t.name = v.name AND t.owner = v.owner"
				+ " AND t.fence = v.fence WHERE t.expires_at > clock_timestamp() ORDER BY t.name FOR UPDATE OF t) s"
				+ " WHERE l.name = s.name RETURNING l.name, l.waited,"
				+ " CASE WHEN l.waited THEN pg_notify(?, l.name) END IS NULL")) {
			statement.setArray(1, connection.createArrayOf("text", names));
			statement.setArray(2, connection.createArrayOf("text", owners));
			statement.setArray(3, connection.createArrayOf("bigint", fences));
			statement.setString(4, sql.channel);
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					released.put(result.getString(1), result.getBoolean(2));
				}
			}
		}
		return released;
	}

	/** As {@link #releasePostgres}, in a transaction of two statements. */
	private static Map<String, Boolean> releaseLocked(Connection connection, FamilySql sql,
			List<JdbcLockHandle> handles) throws SQLException {
		Map<String, Boolean> held = new HashMap<>();
		Map<String, JdbcLockHandle> byKey = new HashMap<>();
		handles.forEach((handle) -> byKey.put(handle.key(), handle));
		// The rows locked by key in key order, as an acquisition locks them; the owner
		// and fence checked here.
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT name, owner, fence, waited FROM " + sql.table + " WHERE name IN ("
					+ placeholders(byKey.size()) + ") AND expires_at > " + sql.now + " ORDER BY name FOR UPDATE")) {
			FamilySql.bind(statement, byKey.keySet().toArray());
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					JdbcLockHandle handle = byKey.get(result.getString(1));
					if (handle != null && handle.owner.equals(result.getString(2))
							&& handle.fence == result.getLong(3)) {
						held.put(handle.key(), result.getBoolean(4));
					}
				}
			}
		}
		if (!held.isEmpty()) {
			FamilySql.update(connection, "UPDATE " + sql.table + " SET owner = NULL, expires_at = " + sql.now
					+ " WHERE name IN (" + placeholders(held.size()) + ")", held.keySet().toArray());
		}
		return held;
	}

	/**
	 * Frees, in the background, the keys an acquisition may have taken without learning
	 * it, each by its own owner.
	 */
	private void undo(List<String> keys, List<String> owners, long untilNanos) {
		this.calls.backgroundUntil("undo a multi-key acquisition of " + keys + " that ended without its result",
				(connection) -> {
					for (int i = 0; i < keys.size(); i++) {
						this.provider.dialect().undo(connection, this.provider.tableName(), keys.get(i), owners.get(i));
					}
					return null;
				}, untilNanos);
	}

	private static String placeholders(int count) {
		StringBuilder in = new StringBuilder();
		for (int i = 0; i < count; i++) {
			in.append((i == 0) ? "?" : ", ?");
		}
		return in.toString();
	}

	/**
	 * An attempt's outcome: the fence of every key in order, or the busy key and its
	 * holder's remaining lease in microseconds.
	 */
	private record Outcome(long @Nullable [] fences, long remaining, @Nullable String busyKey) {

		static Outcome taken(long[] fences) {
			return new Outcome(fences, 0, null);
		}

	}

}
