package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.PermitCountMismatchException;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * Semaphores in the tables {@code
 *
<table>
 * _semaphore} and {@code
 *
<table>
 * _permit} (see {@link SemaphoreStatements}).
 *
 * <p>
 * <b>Never more than N holders.</b> A permit is taken in one transaction that locks the
 * semaphore's row, counts the permits whose lease has not run out (on the database's
 * clock), and adds one only if fewer than N are live. Takers of one semaphore thus go one
 * after another, in every JVM, and each counts every permit committed before it.
 *
 * <p>
 * <b>Leak-free.</b> A permit is a row with its own owner and lease: it counts only until
 * its own lease runs out, so a holder that dies loses its permit at its lease, and a
 * living holder's renewals extend its own row only. Renewal and release check the owner
 * and the permit's fence; nobody frees or renews another's permit, or a permit whose
 * lease ran out.
 *
 * <p>
 * <b>Fencing.</b> Each permit raises the semaphore's fence to {@code max(fence + 1,
 * database clock in microseconds)} and takes it as its token, so a semaphore's tokens
 * only rise, also across a sweep of its idle row.
 *
 * <p>
 * <b>The count</b> is stored with the semaphore; a taker declaring another while permits
 * are live gets {@link PermitCountMismatchException} naming both.
 *
 * <p>
 * <b>Signals.</b> On PostgreSQL a waiter that finds no permit marks the semaphore, and
 * the release of a permit of a marked semaphore clears the mark and notifies in the same
 * round trip, waking this semaphore's waiters in every JVM; elsewhere waiters poll. The
 * release first locks the semaphore's row unless a taker holds it: locked, it sees the
 * mark of every taker that counted the permit as live; skipped, it notifies whatever the
 * mark says, as the taker in flight may mark the row too late for it to see. It never
 * waits for a taker.
 *
 * <p>
 * <b>Lost replies.</b> Each operation is one call of {@link JdbcCalls}, bounded by the
 * store timeout and run again on another connection when one breaks. A taker run again
 * finds the permit its first run committed; a take whose outcome is unknown is undone by
 * its unique owner in the background.
 */
final class JdbcSemaphores implements AutoCloseable {

	private final JdbcCalls calls;

	private final String table;

	private final JdbcCalls.Work<JdbcLockDialect> dialect;

	private final LazySignals signals;

	private final PollingSignals poller;

	private final Map<JdbcLockDialect, SemaphoreStatements> statements = new ConcurrentHashMap<>();

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final BlockRefusals refusals;

	JdbcSemaphores(JdbcCalls calls, String table, JdbcCalls.Work<JdbcLockDialect> dialect, LazySignals signals,
			BlockRefusals refusals) {
		this.refusals = refusals;
		this.calls = calls;
		this.table = table;
		this.dialect = dialect;
		this.signals = signals;
		this.poller = new PollingSignals(calls, this::readPermits, (state) -> ((Polled) state).free());
	}

	private SemaphoreStatements statements(Connection connection) throws SQLException {
		JdbcLockDialect known = this.dialect.run(connection);
		return this.statements.computeIfAbsent(known,
				(d) -> new SemaphoreStatements(SqlClock.of(d), d == JdbcLockDialect.MARIADB, this.table));
	}

	/** Semaphore keys that a waiter of this JVM listens for. */
	int subscribedKeys() {
		return this.signals.subscribedKeys() + this.poller.subscribedKeys();
	}

	/**
	 * Wakes a semaphore's waiters when one of its permits is freed: {@code NOTIFY} on
	 * PostgreSQL, elsewhere a poller of the semaphores waited for.
	 */
	ReleaseSignals signals() {
		ReleaseSignals notified = this.signals.get();
		return (notified != ReleaseSignals.NONE) ? notified : this.poller;
	}

	/**
	 * The live permits of the semaphores among {@code keys} that have any, for the
	 * poller.
	 */
	private Map<String, Polled> readPermits(Connection connection, List<String> keys) throws SQLException {
		String query = statements(connection).poll.replace("IN (?)", "IN (" + "?, ".repeat(keys.size() - 1) + "?)");
		Map<String, Polled> states = new HashMap<>();
		try (PreparedStatement statement = connection.prepareStatement(query)) {
			for (int i = 0; i < keys.size(); i++) {
				statement.setString(i + 1, keys.get(i));
			}
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					states.put(result.getString(1), new Polled(result.getInt(2), result.getLong(3), result.getLong(4)));
				}
			}
		}
		return states;
	}

	/**
	 * Takes a permit of semaphore {@code key} of {@code permits} permits if fewer than
	 * that are live; otherwise busy, with the time until the first live permit runs out.
	 * @throws PermitCountMismatchException if live permits were taken with another count
	 */
	LockAttempt tryAcquire(String key, int permits, Duration leaseTime, boolean waiting) {
		long leaseMicros = JdbcCalls.micros(leaseTime);
		String owner = this.instanceId + ":" + this.sequence.incrementAndGet();
		long sentAt = System.nanoTime();
		// Past this, a permit the call may have taken has run out by itself.
		long undoUntil = sentAt + leaseTime.toNanos() + this.calls.timeout().toNanos();
		AtomicInteger runs = new AtomicInteger();
		Taken taken = this.calls.call(key, "take a permit of semaphore '" + key + "'", (connection) -> {
			boolean rerun = runs.getAndIncrement() > 0;
			SemaphoreStatements sql = statements(connection);
			Attempt attempt = new Attempt(sql, key, owner, permits, leaseMicros, waiting, rerun);
			Taken outcome = run(attempt, connection);
			if (outcome == null) {
				// The semaphore's first permit: its row is created outside the
				// transaction, so that two first takers cannot deadlock on creating it.
				Transactions.update(connection, sql.createRow, key, permits);
				outcome = run(attempt, connection);
			}
			if (outcome == null) {
				throw new SQLException("The row of semaphore '" + key + "' was swept as it was created");
			}
			return outcome;
		}, (late) -> {
			if (late == null || late.fence() > 0) {
				undo(key, owner, undoUntil);
			}
		});
		if (taken.declared() > 0) {
			throw new PermitCountMismatchException(key, taken.declared(), permits);
		}
		if (taken.fence() > 0) {
			return new LockAttempt.Acquired(
					new PermitHandle(key, owner, taken.fence(), new LeaseFloor(sentAt, leaseTime)));
		}
		return new LockAttempt.Busy(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(taken.remainingMicros())));
	}

	/**
	 * One attempt: one round trip on PostgreSQL unless run again, one compound statement
	 * on MariaDB unless a server refused to parse one (it then ran nothing), a
	 * transaction of several statements otherwise.
	 */
	private @Nullable Taken run(Attempt attempt, Connection connection) throws SQLException {
		if (attempt.sql().takeTogether != null && !attempt.rerun()) {
			return attempt.together(connection);
		}
		if (attempt.sql().takeBlock != null && this.refusals.allowed()) {
			try {
				return attempt.inBlock(connection);
			}
			catch (SQLException ex) {
				if (!this.refusals.refusedBy(ex)) {
					throw ex;
				}
			}
		}
		return Transactions.run(connection, attempt::take);
	}

	private void undo(String key, String owner, long untilNanos) {
		this.calls.backgroundUntil("undo a permit of semaphore '" + key + "' taken without its result",
				(connection) -> Transactions.update(connection, statements(connection).undo, key, owner), untilNanos);
	}

	/**
	 * Deletes permits whose lease ran out and semaphores idle for longer than
	 * {@code idleMicros}.
	 * @return the rows deleted
	 */
	int sweep(long idleMicros) {
		return this.calls.call("", "sweep idle semaphores of '" + this.table + "'", (connection) -> {
			SemaphoreStatements sql = statements(connection);
			return Transactions.update(connection, sql.sweepPermits)
					+ Transactions.update(connection, sql.sweepSemaphores, idleMicros);
		}, null);
	}

	@Override
	public void close() {
		this.signals.close();
		this.poller.close();
	}

	/**
	 * A semaphore as the poller reads it: its count, its live permits and the highest
	 * fence among them.
	 */
	record Polled(int permits, long live, long highestFence) {

		boolean free() {
			return this.live < this.permits;
		}

	}

	/**
	 * The answer of one attempt: a permit's fence, or the microseconds until the first
	 * live permit runs out, or the count that live permits were taken with.
	 */
	record Taken(long fence, long remainingMicros, int declared) {

		static Taken acquired(long fence) {
			return new Taken(fence, 0, 0);
		}

		static Taken busy(long remainingMicros) {
			return new Taken(0, Math.max(1, remainingMicros), 0);
		}

		static Taken mismatch(int declared) {
			return new Taken(0, 0, declared);
		}

	}

	/** One attempt's transaction, run again (on another connection) when one breaks. */
	private record Attempt(SemaphoreStatements sql, String key, String owner, int permits, long leaseMicros,
			boolean waiting, boolean rerun) {

		/**
		 * The outcome as one compound statement (MariaDB), or null when the semaphore has
		 * no row yet.
		 */
		@Nullable Taken inBlock(Connection connection) throws SQLException {
			try (PreparedStatement statement = connection.prepareStatement(this.sql.takeBlock)) {
				Transactions.bind(statement, this.key, this.rerun, this.key, this.owner, this.key, this.permits,
						this.permits, this.permits, this.key, this.key, this.key, this.owner, this.leaseMicros);
				try (ResultSet row = MariaDbReadHolds.answer(statement)) {
					long value = row.getLong(2);
					return switch (row.getInt(1)) {
						case 0 -> Taken.busy(value);
						case 1 -> Taken.acquired(value);
						case 2 -> Taken.mismatch((int) value);
						default -> null;
					};
				}
			}
		}

		/**
		 * The outcome of a first run on PostgreSQL, in one round trip, or null when the
		 * semaphore has no row yet.
		 */
		@Nullable Taken together(Connection connection) throws SQLException {
			String sql = this.waiting ? this.sql.takeTogetherWaiting : this.sql.takeTogether;
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				Transactions.bind(statement, this.key, this.key, this.permits, this.key, this.permits, this.permits,
						this.key, this.owner, this.leaseMicros);
				if (this.waiting) {
					FamilySql.bindFrom(statement, 10, this.key, this.key, this.owner);
				}
				statement.execute();
				int declared;
				try (ResultSet row = statement.getResultSet()) {
					if (!row.next()) {
						return null;
					}
					declared = row.getInt(1);
				}
				statement.getMoreResults();
				try (ResultSet result = statement.getResultSet()) {
					result.next();
					long added = result.getLong(1);
					boolean taken = !result.wasNull();
					long raised = result.getLong(2);
					if (taken) {
						return Taken.acquired(added);
					}
					if (raised > 0) {
						// Only this attempt's owner can be there, and a first run has
						// none.
						throw new SQLException("A permit of semaphore '" + this.key + "' by this attempt's owner"
								+ " was there before the attempt");
					}
					long live = result.getLong(3);
					if (live > 0 && declared != this.permits) {
						return Taken.mismatch(declared);
					}
					return Taken.busy(result.getLong(4));
				}
			}
		}

		/**
		 * The outcome as a transaction of several statements, or null when the semaphore
		 * has no row yet.
		 */
		@Nullable Taken take(Connection connection) throws SQLException {
			Long declared = Transactions.queryLong(connection, this.sql.lockRow, this.key);
			if (declared == null) {
				return null;
			}
			if (this.rerun) {
				// The first run may have committed this owner's permit before its reply
				// was lost.
				Long mine = Transactions.queryLong(connection, this.sql.heldFence, this.key, this.owner);
				if (mine != null) {
					return Taken.acquired(mine);
				}
			}
			long live;
			long firstRunsOut;
			try (PreparedStatement statement = connection.prepareStatement(this.sql.live)) {
				statement.setString(1, this.key);
				try (ResultSet result = statement.executeQuery()) {
					result.next();
					live = result.getLong(1);
					firstRunsOut = result.getLong(2);
				}
			}
			if (live > 0 && declared != this.permits) {
				return Taken.mismatch(declared.intValue());
			}
			if (live >= this.permits) {
				if (this.waiting && this.sql.clock.postgres) {
					Transactions.update(connection, this.sql.markWaited, this.key);
				}
				return Taken.busy(firstRunsOut);
			}
			long fence = this.sql.clock.postgres
					? Transactions.queryLong(connection, this.sql.raiseFence, this.permits, this.key)
					: Transactions.updateReturningId(connection, this.sql.raiseFence, this.permits, this.key);
			if (fence <= 0) {
				throw new SQLException("The database returned no fence for a permit of semaphore '" + this.key + "'");
			}
			if (Transactions.update(connection, this.sql.addPermit, this.key, this.owner, fence,
					this.leaseMicros) != 1) {
				// Only this attempt's owner can be there: a run before it, whose
				// permit ran out.
				throw new SQLException("A permit of semaphore '" + this.key + "' by this attempt's owner ran out"
						+ " before the attempt could answer");
			}
			return Taken.acquired(fence);
		}

	}

	/**
	 * One permit: its renewals and its release check its owner and fence, and that its
	 * lease has not run out.
	 */
	final class PermitHandle implements LockHandle {

		private final String key;

		private final String owner;

		private final long fence;

		private final LeaseFloor floor;

		PermitHandle(String key, String owner, long fence, LeaseFloor floor) {
			this.key = key;
			this.owner = owner;
			this.fence = fence;
			this.floor = floor;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.fence;
		}

		@Override
		public boolean renew(Duration leaseTime) {
			long leaseMicros = JdbcCalls.micros(leaseTime);
			long sentAt = System.nanoTime();
			boolean renewed = JdbcSemaphores.this.calls.call(this.key, "renew a permit of semaphore '" + this.key + "'",
					(connection) -> Transactions.update(connection, statements(connection).renew, leaseMicros, this.key,
							this.owner, this.fence) == 1,
					null);
			if (renewed) {
				this.floor.renewed(sentAt, leaseTime);
			}
			return renewed;
		}

		/**
		 * {@inheritDoc}
		 * <p>
		 * One round trip; on PostgreSQL it also notifies the semaphore's waiters if one
		 * marked it. A release run again after its reply was lost finds nothing to free;
		 * while the permit's lease surely still ran ({@link LeaseFloor}) only the earlier
		 * run can have freed it, which counts as the release rather than a loss.
		 */
		@Override
		public boolean release() {
			AtomicInteger runs = new AtomicInteger();
			return JdbcSemaphores.this.calls.call(this.key, "release a permit of semaphore '" + this.key + "'",
					(connection) -> {
						boolean rerun = runs.getAndIncrement() > 0;
						return freed(connection) || (rerun && this.floor.liveAt(System.nanoTime()));
					}, null);
		}

		private boolean freed(Connection connection) throws SQLException {
			JdbcLockDialect known = JdbcSemaphores.this.dialect.run(connection);
			SemaphoreStatements sql = statements(connection);
			if (!sql.clock.postgres) {
				return Transactions.update(connection, sql.release, this.key, this.owner, this.fence) == 1;
			}
			try (PreparedStatement statement = connection.prepareStatement(sql.release)) {
				Transactions.bind(statement, this.key, this.key, this.owner, this.fence,
						JdbcSemaphores.this.signals.channel(known));
				statement.execute();
				statement.getMoreResults();
				try (ResultSet result = statement.getResultSet()) {
					return result.next() && result.getLong(1) == 1;
				}
			}
		}

		@Override
		public String toString() {
			return "PermitHandle[" + this.key + ", owner=" + this.owner + ", token=" + this.fence + "]";
		}

	}

}
