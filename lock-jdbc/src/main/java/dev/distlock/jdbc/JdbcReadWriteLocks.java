package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Read-write locks of the JDBC store. The writer's side is the plain lock's row. While
 * readers hold a key, its row's owner is {@link FamilySql#READERS} and its
 * {@code expires_at} the latest read lease, so a plain acquire finds it busy exactly as
 * long as a reader may still hold it, and every read takes the next fencing token from
 * the row's fence: a writer's token is above every earlier hold's. Each read hold is a
 * row of {@code TABLE_reader} with its own owner, token and lease on the database's
 * clock: a reader that is neither renewed nor released lapses at its own lease, whatever
 * the other readers do (the last release or renewal sets the lock row's lease to the
 * latest live read lease).
 *
 * <p>
 * Writers are preferred: a waiting writer that finds readers in its way records an intent
 * in {@code TABLE_intent} (kept for the request's queue timeout after each attempt), and
 * no new reader comes in while a live intent is recorded; the writer's attempt that takes
 * the key ends it, and so does a withdrawal. A reader's attempt and every change to the
 * read holds of a key run in one transaction that first locks the key's row, so readers
 * and writers of a key are serialized on that row. On PostgreSQL and MariaDB that
 * transaction is sent as one round trip ({@link PostgresReadHolds},
 * {@link MariaDbReadHolds}); on PostgreSQL the last reader's release and a withdrawn
 * intent are signalled by {@code NOTIFY}, as a writer's release is.
 */
final class JdbcReadWriteLocks {

	private static final Log logger = LogFactory.getLog(JdbcReadWriteLocks.class);

	/** A first read of a key that races with another to create its row tries again. */
	private static final int MAX_TRIES = 4;

	/** A first read that created the key's row: run again, now that the row is there. */
	private static final long RETRY = -1;

	private final JdbcLockProvider provider;

	private final JdbcCalls calls;

	private volatile @Nullable FamilySql sql;

	private volatile @Nullable PostgresReadHolds postgres;

	private volatile @Nullable MariaDbReadHolds mariadb;

	private final BlockRefusals refusals;

	/**
	 * The intents this JVM's writers may have recorded (key and waiter), so that a writer
	 * that found a plain lock in its way ends no intent it never recorded.
	 */
	private final Set<String> recorded = ConcurrentHashMap.newKeySet();

	JdbcReadWriteLocks(JdbcLockProvider provider, JdbcCalls calls, BlockRefusals refusals) {
		this.provider = provider;
		this.calls = calls;
		this.refusals = refusals;
	}

	private FamilySql sql() {
		FamilySql known = this.sql;
		if (known == null) {
			known = new FamilySql(this.provider.dialect(), this.provider.tableName());
			this.sql = known;
		}
		return known;
	}

	/** The one-round-trip statements on PostgreSQL, null elsewhere. */
	private @Nullable PostgresReadHolds postgres(FamilySql sql) {
		if (!sql.postgres) {
			return null;
		}
		PostgresReadHolds known = this.postgres;
		if (known == null) {
			known = new PostgresReadHolds(sql);
			this.postgres = known;
		}
		return known;
	}

	/**
	 * The one-round-trip blocks on MariaDB, null elsewhere, and once a server refused to
	 * parse one.
	 */
	private @Nullable MariaDbReadHolds mariadb(FamilySql sql) {
		if (!sql.mariadb || !this.refusals.allowed()) {
			return null;
		}
		MariaDbReadHolds known = this.mariadb;
		if (known == null) {
			known = new MariaDbReadHolds(sql);
			this.mariadb = known;
		}
		return known;
	}

	/**
	 * One read hold on {@code key}: taken when no writer holds the key and no writer's
	 * intent is recorded; otherwise busy until the writer's lease or the intent ends, and
	 * the row is marked so that the writer's release is signalled if {@code waiting}.
	 */
	LockAttempt tryLockShared(String key, Duration leaseTime, boolean waiting) {
		JdbcLockProvider.checkKey(key);
		FamilySql sql = sql();
		String owner = this.provider.newOwner();
		long leaseMicros = JdbcCalls.micros(leaseTime);
		long sentAt = System.nanoTime();
		long undoUntil = sentAt + leaseTime.toNanos() + this.calls.timeout().toNanos();
		Taken taken = this.calls.call(key, "take a read lock on '" + key + "'",
				(connection) -> takeRead(connection, sql, key, owner, leaseMicros, waiting), (late) -> {
					if (late == null || late.acquired()) {
						undo(key, owner, undoUntil);
					}
				});
		if (taken.acquired()) {
			return new LockAttempt.Acquired(
					new JdbcReadHandle(key, owner, taken.value(), new LeaseFloor(sentAt, leaseTime)));
		}
		return new LockAttempt.Busy(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(Math.max(1, taken.value()))));
	}

	private Taken takeRead(Connection connection, FamilySql sql, String key, String owner, long leaseMicros,
			boolean waiting) throws SQLException {
		PostgresReadHolds postgres = postgres(sql);
		for (int attempt = 1;; attempt++) {
			MariaDbReadHolds mariadb = mariadb(sql);
			try {
				Taken taken;
				if (postgres != null || mariadb != null) {
					taken = (postgres != null) ? postgres.take(connection, key, owner, leaseMicros, waiting, RETRY)
							: mariadb.take(connection, key, owner, leaseMicros, waiting, RETRY);
					if (taken.value() == RETRY && !taken.acquired()) {
						sql.createRows(connection, List.of(key));
					}
				}
				else {
					taken = sql.inTransaction(connection,
							(tx) -> takeReadInTransaction(tx, sql, key, owner, leaseMicros, waiting));
				}
				if (taken.acquired() || taken.value() != RETRY || attempt >= MAX_TRIES) {
					return taken;
				}
			}
			catch (SQLException ex) {
				if (mariadb != null && this.refusals.refusedBy(ex)) {
					// Parsed as nothing, so nothing ran: the same attempt, statement by
					// statement.
					continue;
				}
				// Another caller created the key's row first: its row is there now.
				if (attempt >= MAX_TRIES || ex.getSQLState() == null || !ex.getSQLState().startsWith("23")) {
					throw ex;
				}
			}
		}
	}

	private Taken takeReadInTransaction(Connection connection, FamilySql sql, String key, String owner,
			long leaseMicros, boolean waiting) throws SQLException {
		try (PreparedStatement statement = connection
			.prepareStatement("SELECT owner, fence, " + sql.microsUntil("expires_at") + ", " + sql.nowMicros + " FROM "
					+ sql.table + " WHERE name = ? FOR UPDATE")) {
			statement.setString(1, key);
			try (ResultSet row = statement.executeQuery()) {
				if (!row.next()) {
					// The key's first use: its row is created holding no lock, then
					// locked.
					connection.rollback();
					sql.createRows(connection, List.of(key));
					return new Taken(false, RETRY);
				}
				String holder = row.getString(1);
				long fence = row.getLong(2);
				long remaining = row.getLong(3);
				long now = row.getLong(4);
				boolean readers = FamilySql.READERS.equals(holder);
				if (holder != null && !readers && remaining > 0) {
					return busy(connection, sql, key, waiting, remaining);
				}
				Long intent = FamilySql.queryLong(connection, "SELECT MAX(" + sql.microsUntil("expires_at") + ") FROM "
						+ sql.intents + " WHERE name = ? AND" + " expires_at > " + sql.now, key);
				if (intent != null && intent > 0) {
					return busy(connection, sql, key, waiting, intent);
				}
				long next = Math.max(fence + 1, now);
				// The read row first: the lock row's lease, set after it, is never
				// shorter.
				insertReader(connection, sql, key, owner, next, leaseMicros);
				boolean live = readers && remaining > 0;
				String expires = live ? "GREATEST(expires_at, " + sql.after("?") + ")" : sql.after("?");
				FamilySql.update(connection,
						"UPDATE " + sql.table + " SET owner = ?, fence = ?, expires_at = " + expires
								+ (live ? "" : ", waited = FALSE") + " WHERE name = ?",
						FamilySql.READERS, next, leaseMicros, key);
				return new Taken(true, next);
			}
		}
	}

	private static Taken busy(Connection connection, FamilySql sql, String key, boolean waiting, long remaining)
			throws SQLException {
		if (waiting) {
			FamilySql.update(connection, "UPDATE " + sql.table + " SET waited = TRUE WHERE name = ?", key);
		}
		return new Taken(false, remaining);
	}

	private static void insertReader(Connection connection, FamilySql sql, String key, String owner, long fence,
			long leaseMicros) throws SQLException {
		if (sql.postgres) {
			FamilySql.update(connection,
					"INSERT INTO " + sql.readers + " (name, owner, fence, expires_at) VALUES (?, ?, ?, "
							+ sql.after("?") + ") ON CONFLICT (name, owner) DO UPDATE SET fence = EXCLUDED.fence,"
							+ " expires_at = EXCLUDED.expires_at",
					key, owner, fence, leaseMicros);
			return;
		}
		// The new values again rather than VALUES(col), which MySQL deprecates and
		// MariaDB has no replacement for that MySQL accepts; the clock is read once per
		// statement, so both expressions are the same time.
		FamilySql.update(connection,
				"INSERT INTO " + sql.readers + " (name, owner, fence, expires_at) VALUES (?, ?, ?, " + sql.after("?")
						+ ") ON DUPLICATE KEY UPDATE fence = ?, expires_at = " + sql.after("?"),
				key, owner, fence, leaseMicros, fence, leaseMicros);
	}

	/**
	 * After a waiting writer's plain attempt on {@code request}'s key: busy behind
	 * readers, it records or refreshes the writer's intent (one statement, which records
	 * nothing when a writer holds the key); taken after an attempt that may have recorded
	 * one, it ends the intent and marks the row, so that the writer's release wakes the
	 * readers the intent held back.
	 * @param behindReaders whether the attempt, if busy, may have found readers (false
	 * when the store told a plain lock holds the key: no intent, and no statement)
	 */
	LockAttempt afterWriterAttempt(LockRequest request, LockAttempt attempt, boolean behindReaders) {
		String key = request.key();
		String waiter = request.waiterId();
		if (waiter == null) {
			return attempt;
		}
		FamilySql sql = sql();
		if (attempt instanceof LockAttempt.Busy && behindReaders) {
			long timeout = JdbcCalls.micros(request.queueTimeout());
			// MariaDB and MySQL: the new value again, not the VALUES(col) MySQL
			// deprecates.
			String upsert = sql.postgres ? " ON CONFLICT (name, waiter) DO UPDATE SET expires_at = EXCLUDED.expires_at"
					: " ON DUPLICATE KEY UPDATE expires_at = " + sql.after("?");
			Object[] args = sql.postgres ? new Object[] { waiter, timeout, key, FamilySql.READERS }
					: new Object[] { waiter, timeout, key, FamilySql.READERS, timeout };
			// Before the statement: one whose reply is lost may have recorded it.
			this.recorded.add(key + '\n' + waiter);
			this.calls.call(key, "record a waiting writer's intent on lock '" + key + "'",
					(connection) -> FamilySql.update(connection,
							"INSERT INTO " + sql.intents + " (name, waiter, expires_at) SELECT name, ?, "
									+ sql.after("?") + " FROM " + sql.table
									+ " WHERE name = ? AND owner = ? AND expires_at > " + sql.now + upsert,
							args),
					null);
		}
		else if (request.intentRecorded() && attempt instanceof LockAttempt.Acquired acquired
				&& this.recorded.remove(key + '\n' + waiter)) {
			String owner = ((JdbcLockHandle) acquired.handle()).owner;
			try {
				this.calls.call(key, "end a writer's intent on lock '" + key + "'", (connection) -> {
					FamilySql.update(connection, "DELETE FROM " + sql.intents + " WHERE name = ? AND waiter = ?", key,
							waiter);
					return FamilySql.update(connection,
							"UPDATE " + sql.table + " SET waited = TRUE WHERE name = ? AND owner = ?", key, owner);
				}, null);
			}
			catch (LockBackendException ex) {
				// The lock is held all the same; the intent lapses after its timeout.
				logger.debug("Could not end a writer's intent on lock '" + key + "'; it lapses by itself", ex);
			}
		}
		return attempt;
	}

	/**
	 * Ends writer {@code waiter}'s intent on {@code key} at once; on PostgreSQL a
	 * recorded one is signalled, waking the readers it held back.
	 */
	void withdraw(String key, String waiter) {
		if (!this.recorded.remove(key + '\n' + waiter)) {
			return;
		}
		FamilySql sql = sql();
		this.calls.call(key, "withdraw a writer's intent on lock '" + key + "'", (connection) -> {
			int deleted = FamilySql.update(connection, "DELETE FROM " + sql.intents + " WHERE name = ? AND waiter = ?",
					key, waiter);
			if (deleted > 0 && sql.channel != null) {
				notify(connection, sql.channel, key);
			}
			return deleted;
		}, null);
	}

	private static void notify(Connection connection, String channel, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
			statement.setString(1, channel);
			statement.setString(2, key);
			statement.executeQuery().close();
		}
	}

	/** Read holds and intents whose lease ran out more than {@code idleMicros} ago. */
	int sweep(long idleMicros) {
		FamilySql sql = sql();
		return this.calls.call("", "sweep idle read holds and intents of the lock table '" + sql.table + "'",
				(connection) -> FamilySql.update(connection,
						"DELETE FROM " + sql.readers + " WHERE expires_at < " + sql.after("?"), -idleMicros)
						+ FamilySql.update(connection,
								"DELETE FROM " + sql.intents + " WHERE expires_at < " + sql.after("?"), -idleMicros),
				null);
	}

	private void undo(String key, String owner, long untilNanos) {
		this.calls.backgroundUntil("undo a read lock on '" + key + "' taken without its result",
				(connection) -> release(connection, sql(), key, owner, null), untilNanos);
	}

	/**
	 * Drops one read hold ({@code fence} null: whatever its lease, for an undo) and sets
	 * the lock row's lease to the latest live read lease, or frees it when none is left
	 * (signalling the release if the row was waited on).
	 * @return whether the hold was there, and whether its release was signalled
	 */
	private Released release(Connection connection, FamilySql sql, String key, String owner, @Nullable Long fence)
			throws SQLException {
		PostgresReadHolds postgres = postgres(sql);
		if (postgres != null) {
			return postgres.release(connection, key, owner, fence);
		}
		MariaDbReadHolds mariadb = mariadb(sql);
		if (mariadb != null) {
			try {
				return mariadb.release(connection, key, owner, fence);
			}
			catch (SQLException ex) {
				if (!this.refusals.refusedBy(ex)) {
					throw ex;
				}
			}
		}
		return sql.inTransaction(connection, (tx) -> {
			Long waited = FamilySql.queryLong(tx,
					"SELECT CASE WHEN waited THEN 1 ELSE 0 END FROM " + sql.table + " WHERE name = ? FOR UPDATE", key);
			int deleted = (fence != null)
					? FamilySql.update(tx,
							"DELETE FROM " + sql.readers + " WHERE name = ? AND owner = ? AND fence = ?"
									+ " AND expires_at > " + sql.now,
							key, owner, fence)
					: FamilySql.update(tx, "DELETE FROM " + sql.readers + " WHERE name = ? AND owner = ?", key, owner);
			if (deleted == 0 || waited == null) {
				return Released.NOT_HELD;
			}
			Long others = FamilySql.queryLong(tx,
					"SELECT 1 FROM " + sql.readers + " WHERE name = ? AND expires_at > " + sql.now + " LIMIT 1", key);
			if (others != null) {
				FamilySql.update(tx,
						"UPDATE " + sql.table + " SET expires_at = COALESCE((SELECT MAX(r.expires_at) FROM "
								+ sql.readers + " r WHERE r.name = ? AND r.expires_at > " + sql.now + "), " + sql.now
								+ ") WHERE name = ? AND owner = ?",
						key, key, FamilySql.READERS);
				return Released.RELEASED;
			}
			int freed = FamilySql.update(tx, "UPDATE " + sql.table + " SET owner = NULL, expires_at = " + sql.now
					+ " WHERE name = ? AND owner = ?", key, FamilySql.READERS);
			if (freed == 1 && waited == 1 && sql.channel != null) {
				notify(tx, sql.channel, key);
			}
			return (freed == 1 && waited == 1) ? Released.LAST_TO_WAITERS : Released.RELEASED;
		});
	}

	/** The outcome of a read attempt: the token if taken, else the remaining micros. */
	record Taken(boolean acquired, long value) {

	}

	enum Released {

		NOT_HELD, RELEASED, LAST_TO_WAITERS

	}

	/** One read hold: its own owner, token and lease. */
	final class JdbcReadHandle implements LockHandle {

		private final String key;

		private final String owner;

		private final long token;

		private final LeaseFloor floor;

		JdbcReadHandle(String key, String owner, long token, LeaseFloor floor) {
			this.key = key;
			this.owner = owner;
			this.token = token;
			this.floor = floor;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.token;
		}

		/**
		 * Extends this hold's lease, and the lock row's to at least it, if the hold has
		 * not run out; one transaction.
		 */
		@Override
		public boolean renew(Duration leaseTime) {
			FamilySql sql = sql();
			long micros = JdbcCalls.micros(leaseTime);
			long sentAt = System.nanoTime();
			boolean renewed = JdbcReadWriteLocks.this.calls.call(this.key, "renew a read lock on '" + this.key + "'",
					(connection) -> sql.inTransaction(connection, (tx) -> {
						Long locked = FamilySql.queryLong(tx,
								"SELECT 1 FROM " + sql.table + " WHERE name = ? AND owner = ? FOR UPDATE", this.key,
								FamilySql.READERS);
						if (locked == null || FamilySql.update(tx,
								"UPDATE " + sql.readers + " SET expires_at = " + sql.after("?")
										+ " WHERE name = ? AND owner = ? AND fence = ? AND expires_at > " + sql.now,
								micros, this.key, this.owner, this.token) == 0) {
							return false;
						}
						FamilySql.update(tx, "UPDATE " + sql.table + " SET expires_at = GREATEST(expires_at, "
								+ sql.after("?") + ") WHERE name = ?", micros, this.key);
						return true;
					}), null);
			if (renewed) {
				this.floor.renewed(sentAt, leaseTime);
			}
			return renewed;
		}

		/**
		 * Drops this hold if it has not run out; the last reader's release frees the key.
		 * A run again after a lost reply that finds the hold gone while its lease surely
		 * still ran ({@link LeaseFloor}) counts the earlier run as the release rather
		 * than report a loss.
		 */
		@Override
		public boolean release() {
			FamilySql sql = sql();
			AtomicInteger runs = new AtomicInteger();
			return JdbcReadWriteLocks.this.calls.call(this.key, "release a read lock on '" + this.key + "'",
					(connection) -> {
						boolean rerun = runs.getAndIncrement() > 0;
						Released released = JdbcReadWriteLocks.this.release(connection, sql, this.key, this.owner,
								this.token);
						return released != Released.NOT_HELD || (rerun && this.floor.liveAt(System.nanoTime()));
					}, null);
		}

		@Override
		public String toString() {
			return "JdbcReadHandle[" + this.key + ", owner=" + this.owner + ", token=" + this.token + "]";
		}

	}

}
