package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.DistributedLatch;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * Countdown latches in the tables {@code
 *
<table>
 * _latch} and {@code
 *
<table>
 * _latch_participant} (see {@link LatchStatements}). Every change is one transaction that
 * locks the latch's row, so concurrent callers in any JVM never lose each other's counts.
 *
 * <p>
 * <b>Idempotent counting.</b> A participant is counted by adding its row for the
 * generation, once: a retry (after a lost reply, by this store or by the caller) finds
 * the row there and counts nothing.
 *
 * <p>
 * <b>Generations</b> are {@code max(previous generation + 1, database clock in
 * microseconds)}, so they rise across re-arms, across expiry (an expired latch keeps its
 * row) and, as long as the database's clock never steps back by more than the sweep age,
 * across a sweep of the row.
 *
 * <p>
 * <b>Expiry.</b> Every write but a count of a participant already counted sets the
 * latch's expiry again; a latch whose expiry passed is gone for every reader, on the
 * database's clock. Its rows are deleted by the provider's sweep.
 *
 * <p>
 * <b>Signals.</b> On PostgreSQL the count that opens a latch, and a re-arm, notify its
 * waiters on commit; on MariaDB and MySQL one poller per provider reads every latch its
 * waiters wait for in one query, at a short interval ({@link PollingSignals}).
 */
final class JdbcLatches implements LatchStore, AutoCloseable {

	/** The longest participant name, as the participant table's column. */
	static final int MAX_PARTICIPANT_LENGTH = 255;

	private final JdbcCalls calls;

	private final String table;

	private final JdbcCalls.Work<JdbcLockDialect> dialect;

	private final LazySignals notifications;

	private final PollingSignals poller;

	private final Map<JdbcLockDialect, LatchStatements> statements = new ConcurrentHashMap<>();

	JdbcLatches(JdbcCalls calls, String table, JdbcCalls.Work<JdbcLockDialect> dialect, LazySignals notifications) {
		this.calls = calls;
		this.table = table;
		this.dialect = dialect;
		this.notifications = notifications;
		this.poller = new PollingSignals(calls, this::readStates, (state) -> false);
	}

	private LatchStatements statements(Connection connection) throws SQLException {
		JdbcLockDialect known = this.dialect.run(connection);
		return this.statements.computeIfAbsent(known, (d) -> new LatchStatements(SqlClock.of(d), this.table));
	}

	/**
	 * {@code NOTIFY} on PostgreSQL; on MariaDB and MySQL a poller of the latches waited
	 * for.
	 */
	@Override
	public ReleaseSignals signals() {
		ReleaseSignals notified = this.notifications.get();
		return (notified != ReleaseSignals.NONE) ? notified : this.poller;
	}

	@Override
	public LatchState join(String key, int count, Duration expiry) {
		checkKey(key);
		long expiryMicros = JdbcCalls.micros(expiry);
		return write(key, "join latch '" + key + "'", (connection, sql, row) -> {
			if (row.live()) {
				Transactions.update(connection, sql.touch, expiryMicros, key);
				return row.state();
			}
			return arm(connection, sql, key, row.state().generation(), count, 0, false, expiryMicros);
		});
	}

	@Override
	public DistributedLatch.CountDown countDown(String key, long generation, String participant, Duration expiry) {
		if (participant.length() > MAX_PARTICIPANT_LENGTH) {
			throw new IllegalArgumentException(
					"The JDBC store takes participant names of at most " + MAX_PARTICIPANT_LENGTH
							+ " characters, but latch '" + key + "' got one of " + participant.length());
		}
		long expiryMicros = JdbcCalls.micros(expiry);
		return this.calls.call(key, "count down latch '" + key + "'", (connection) -> {
			LatchStatements sql = statements(connection);
			return Transactions.run(connection, (tx) -> {
				Row row = lock(tx, sql, key);
				if (row == null || !row.live() || row.state().generation() != generation) {
					return DistributedLatch.CountDown.STALE;
				}
				if (Transactions.queryLong(tx, sql.counted, key, generation, participant) != null) {
					return DistributedLatch.CountDown.ALREADY_COUNTED;
				}
				if (row.state().remaining() == 0) {
					return DistributedLatch.CountDown.ALREADY_OPEN;
				}
				Transactions.update(tx, sql.count, key, generation, participant);
				Transactions.update(tx, sql.countDown, expiryMicros, key);
				if (row.state().remaining() == 1) {
					signal(tx, key);
				}
				return DistributedLatch.CountDown.COUNTED;
			});
		}, null);
	}

	@Override
	public @Nullable LatchState state(String key) {
		return this.calls.call(key, "read latch '" + key + "'", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(statements(connection).state)) {
				statement.setString(1, key);
				try (ResultSet result = statement.executeQuery()) {
					return result.next() ? state(result) : null;
				}
			}
		}, null);
	}

	@Override
	public LatchState rearm(String key, long generation, int count, Duration expiry) {
		long expiryMicros = JdbcCalls.micros(expiry);
		return write(key, "re-arm latch '" + key + "'", (connection, sql, row) -> {
			if (!row.live()) {
				return arm(connection, sql, key, row.state().generation(), count, 0, false, expiryMicros);
			}
			LatchState current = row.state();
			if (current.generation() != generation) {
				return current;
			}
			LatchState armed = arm(connection, sql, key, generation, count, generation, current.remaining() == 0,
					expiryMicros);
			signal(connection, key);
			return armed;
		});
	}

	/**
	 * One change of a latch, in a transaction holding its row (created first, outside the
	 * transaction, if missing).
	 */
	private LatchState write(String key, String operation, Change change) {
		return this.calls.call(key, operation, (connection) -> {
			LatchStatements sql = statements(connection);
			for (int attempt = 0; attempt < 2; attempt++) {
				LatchState state = Transactions.run(connection, (tx) -> {
					Row row = lock(tx, sql, key);
					return (row != null) ? change.apply(tx, sql, row) : null;
				});
				if (state != null) {
					return state;
				}
				Transactions.update(connection, sql.createRow, key);
			}
			throw new SQLException("The row of latch '" + key + "' was swept as it was created");
		}, null);
	}

	private LatchState arm(Connection connection, LatchStatements sql, String key, long after, int count,
			long previousGeneration, boolean previousOpened, long expiryMicros) throws SQLException {
		Object[] parameters = { count, count, previousGeneration, previousOpened, expiryMicros, key };
		Long generation = sql.clock.postgres ? Transactions.queryLong(connection, sql.arm, parameters)
				: (Long) Transactions.updateReturningId(connection, sql.arm, parameters);
		if (generation == null || generation <= after) {
			throw new SQLException("The database returned no new generation for latch '" + key + "'");
		}
		Transactions.update(connection, sql.forget, key, generation);
		return new LatchState(generation, count, count, previousGeneration, previousOpened);
	}

	/** Notifies the latch's waiters on commit (PostgreSQL). */
	private void signal(Connection connection, String key) throws SQLException {
		String channel = this.notifications.channel(this.dialect.run(connection));
		if (channel != null) {
			try (PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
				statement.setString(1, channel);
				statement.setString(2, key);
				statement.executeQuery().close();
			}
		}
	}

	private static @Nullable Row lock(Connection connection, LatchStatements sql, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql.lockRow)) {
			statement.setString(1, key);
			try (ResultSet result = statement.executeQuery()) {
				return result.next() ? new Row(state(result), result.getInt(6) == 1) : null;
			}
		}
	}

	private static LatchState state(ResultSet result) throws SQLException {
		return new LatchState(result.getLong(1), result.getInt(2), result.getInt(3), result.getLong(4),
				result.getBoolean(5));
	}

	/** The states of the live latches among {@code keys}, for the poller. */
	private Map<String, LatchState> readStates(Connection connection, java.util.List<String> keys) throws SQLException {
		Map<String, LatchState> states = new java.util.HashMap<>();
		LatchStatements sql = statements(connection);
		String query = sql.state.replace("name = ?", "name IN (" + "?, ".repeat(keys.size() - 1) + "?)")
			.replace("SELECT ", "SELECT name, ");
		try (PreparedStatement statement = connection.prepareStatement(query)) {
			for (int i = 0; i < keys.size(); i++) {
				statement.setString(i + 1, keys.get(i));
			}
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					states.put(result.getString(1), new LatchState(result.getLong(2), result.getInt(3),
							result.getInt(4), result.getLong(5), result.getBoolean(6)));
				}
			}
		}
		return states;
	}

	/**
	 * Deletes latches expired for longer than {@code idleMicros}, and the participants of
	 * generations no latch has any more.
	 * @return the rows deleted
	 */
	int sweep(long idleMicros) {
		return this.calls.call("", "sweep idle latches of '" + this.table + "'", (connection) -> {
			LatchStatements sql = statements(connection);
			return Transactions.update(connection, sql.sweepLatches, idleMicros)
					+ Transactions.update(connection, sql.sweepParticipants);
		}, null);
	}

	@Override
	public void close() {
		this.notifications.close();
		this.poller.close();
	}

	private static void checkKey(String key) {
		if (key.length() > JdbcLockProvider.MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("The JDBC store takes latch keys of at most "
					+ JdbcLockProvider.MAX_KEY_LENGTH + " characters (the latch table's name column), but got one of "
					+ key.length() + ": '" + key.substring(0, 40) + "...'");
		}
	}

	/** A latch's row, locked: its state, and whether its expiry has not passed. */
	private record Row(LatchState state, boolean live) {
	}

	/** A change of a latch whose row the transaction holds. */
	@FunctionalInterface
	private interface Change {

		LatchState apply(Connection connection, LatchStatements sql, Row row) throws SQLException;

	}

}
