package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * On PostgreSQL, a call that locks its key's row in a first statement and acts in later
 * ones of the same round trip, on a real server: when the first finds no row because the
 * row was deleted while it waited for its lock, and the row is created again before the
 * later statements run, they act on nothing they did not lock; and a permit's release,
 * which locks its semaphore's row first, never misses the mark of a waiter that counted
 * the permit while the release ran.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class PostgresLockedRowTests {

	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	private JdbcPair pair;

	@BeforeAll
	void start() {
		this.pair = JdbcPair.postgres();
	}

	@AfterAll
	void stop() {
		this.pair.close();
	}

	@Test
	void aPermitTakerWhoseRowIsCreatedAgainMeanwhileTakesOnePermitUnderTheNewRowsLock() throws Exception {
		String key = "locked-row-" + UUID.randomUUID();
		acquired(LockAttempt.join(this.pair.provider.tryLock(LockRequest.permit(key, 1, LONG_LEASE)))).release();
		String semaphores = JdbcPair.TABLE + "_semaphore";
		LockAttempt attempt = whileCreatedAgain(key, semaphores,
				"INSERT INTO " + semaphores + " (name, permits, fence, waited) VALUES (?, 1, 0, FALSE)",
				() -> LockAttempt.join(this.pair.provider.tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		LockHandle handle = acquired(attempt);
		assertThat(count("SELECT COUNT(*) FROM " + JdbcPair.TABLE + "_permit WHERE name = ?", key))
			.as("permits of the semaphore")
			.isEqualTo(1);
		assertThat(handle.release()).isTrue();
	}

	@Test
	void aReadTakeThatFoundNoRowToLockWritesNothing() throws Exception {
		String key = "locked-row-" + UUID.randomUUID();
		acquired(LockAttempt.join(this.pair.provider.tryLock(LockRequest.shared(key, LONG_LEASE)))).release();
		FamilySql sql = new FamilySql(JdbcLockDialect.POSTGRESQL, JdbcPair.TABLE);
		PostgresReadHolds holds = new PostgresReadHolds(sql);
		JdbcReadWriteLocks.Taken taken = whileCreatedAgain(key, JdbcPair.TABLE, "INSERT INTO " + JdbcPair.TABLE
				+ " (name, owner, fence, expires_at) VALUES (?, NULL, 0, " + sql.now + ")", () -> {
					try (Connection connection = this.pair.dataSource.getConnection()) {
						return holds.take(connection, key, "reader-" + UUID.randomUUID(), 30_000_000, false, -1);
					}
				});
		assertThat(taken.acquired()).as("taken by a take that found no row").isFalse();
		assertThat(count("SELECT COUNT(*) FROM " + sql.readers + " WHERE name = ?", key)).as("read holds").isZero();
		assertThat(count("SELECT COUNT(*) FROM " + JdbcPair.TABLE + " WHERE name = ? AND owner IS NULL", key))
			.as("the row created again, still free")
			.isEqualTo(1);
		LockHandle writer = acquired(LockAttempt.join(this.pair.other.tryLock(LockRequest.exclusive(key, LONG_LEASE))));
		assertThat(writer.release()).isTrue();
	}

	/**
	 * A release held up after it began (another transaction holds the permit's row), and
	 * a waiter's take meanwhile: the waiter either gets the permit, or its mark is seen
	 * by the release, which signals it. Fallback polls are out of reach: the permit's
	 * lease and the waiter's next look are minutes away.
	 */
	@Test
	void aWaiterThatCountedAPermitBeingReleasedGetsItOrIsSignalled() throws Exception {
		String key = "locked-row-" + UUID.randomUUID();
		Duration minutes = Duration.ofMinutes(5);
		LockHandle holder = acquired(LockAttempt.join(this.pair.provider.tryLock(LockRequest.permit(key, 1, minutes))));
		try (Signals signalled = listen(key)) {
			int before = signalled.count();
			try (Connection blocker = this.pair.otherDataSource.getConnection()) {
				blocker.setAutoCommit(false);
				long pid = count("SELECT pg_backend_pid()", null, blocker);
				assertThat(count("SELECT COUNT(*) FROM (SELECT 1 FROM " + JdbcPair.TABLE
						+ "_permit WHERE name = ? FOR SHARE) AS shared", key, blocker))
					.as("the permit's row, locked")
					.isEqualTo(1);
				CompletableFuture<Boolean> releasing = CompletableFuture.supplyAsync(holder::release, TestThreads.EACH);
				Conditions.await("the release waits for the permit's row", Duration.ofSeconds(20),
						() -> blockedBy(pid) || releasing.isDone());
				assertThat(releasing).as("the release, before the permit's row is let go").isNotDone();
				CompletableFuture<LockAttempt> taking = CompletableFuture.supplyAsync(
						() -> LockAttempt
							.join(this.pair.other.tryLock(LockRequest.permit(key, 1, LONG_LEASE).withWaiting(true))),
						TestThreads.EACH);
				Conditions.await("the waiter's take is answered or waits for the semaphore's row",
						Duration.ofSeconds(20), () -> taking.isDone() || semaphoreRowWaiters() > 0);
				blocker.commit();
				assertThat(releasing.get(30, TimeUnit.SECONDS)).as("released").isTrue();
				LockAttempt attempt = taking.get(30, TimeUnit.SECONDS);
				if (attempt instanceof LockAttempt.Acquired acquired) {
					assertThat(acquired.handle().release()).isTrue();
				}
				else {
					Conditions.await("a release signal for the waiter that found the permit held",
							Duration.ofSeconds(20), () -> signalled.count() > before);
				}
			}
		}
	}

	/**
	 * A release that finds its semaphore's row locked by a taker in flight does not wait
	 * for that taker, and signals the semaphore's waiters whatever the row's mark says:
	 * the taker may have counted the permit as live, and mark the row too late for the
	 * release to see it.
	 */
	@Test
	void aReleaseThatFindsATakerInFlightSignalsWithoutWaitingForIt() throws Exception {
		String key = "locked-row-" + UUID.randomUUID();
		LockHandle holder = acquired(
				LockAttempt.join(this.pair.provider.tryLock(LockRequest.permit(key, 1, Duration.ofMinutes(5)))));
		try (Signals signalled = listen(key); Connection taker = this.pair.otherDataSource.getConnection()) {
			taker.setAutoCommit(false);
			assertThat(count("SELECT COUNT(*) FROM (SELECT 1 FROM " + JdbcPair.TABLE
					+ "_semaphore WHERE name = ? FOR UPDATE) AS locked", key, taker))
				.as("the semaphore's row, locked as a taker locks it")
				.isEqualTo(1);
			int before = signalled.count();
			CompletableFuture<Boolean> releasing = CompletableFuture.supplyAsync(holder::release, TestThreads.EACH);
			assertThat(releasing.get(20, TimeUnit.SECONDS)).as("released while the taker holds the row").isTrue();
			Conditions.await("a release signal while the taker holds the row", Duration.ofSeconds(20),
					() -> signalled.count() > before);
			taker.rollback();
		}
	}

	/**
	 * Subscribes to the release signals of semaphore {@code key} in the second provider,
	 * once they are heard.
	 */
	private Signals listen(String key) throws SQLException {
		AtomicInteger count = new AtomicInteger();
		ReleaseSignals signals = this.pair.other.permitSignals();
		ReleaseSignals.Subscription subscription = signals.subscribe(key, count::incrementAndGet);
		Conditions.await("listening to the semaphore's releases", Duration.ofSeconds(20),
				() -> signals.isListening(key));
		// A listener that starts signals every subscriber once, before it hears any
		// notification: once this one is heard, no signal but a release's is to come.
		int before = count.get();
		try (Connection connection = this.pair.otherDataSource.getConnection();
				PreparedStatement notify = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
			notify.setString(1, JdbcLockDialect.POSTGRESQL.releaseChannel(JdbcPair.TABLE) + "_permit");
			notify.setString(2, key);
			notify.execute();
		}
		Conditions.await("a notification of the test's own heard", Duration.ofSeconds(20), () -> count.get() > before);
		return new Signals(count, subscription);
	}

	private record Signals(AtomicInteger counter, ReleaseSignals.Subscription subscription) implements AutoCloseable {

		int count() {
			return this.counter.get();
		}

		@Override
		public void close() {
			this.subscription.close();
		}

	}

	/** Sessions waiting for a lock on a semaphore's row, taken as a taker takes it. */
	private long semaphoreRowWaiters() {
		try (Connection connection = this.pair.otherDataSource.getConnection()) {
			return count("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE ?",
					"%FROM " + JdbcPair.TABLE + "_semaphore WHERE name = $1 FOR UPDATE%", connection);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Runs {@code take} while another transaction deletes the key's row from
	 * {@code table}: once the take waits for that transaction's lock, the transaction
	 * inserts the row again with {@code insert} and commits, so that the take's lock
	 * finds no row and its later statements see the new one.
	 */
	private <T> T whileCreatedAgain(String key, String table, String insert, Call<T> take) throws Exception {
		try (Connection recreator = this.pair.otherDataSource.getConnection()) {
			recreator.setAutoCommit(false);
			long pid = count("SELECT pg_backend_pid()", null, recreator);
			update(recreator, "DELETE FROM " + table + " WHERE name = ?", key);
			CompletableFuture<T> taking = CompletableFuture.supplyAsync(() -> {
				try {
					return take.call();
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, TestThreads.EACH);
			Conditions.await("the take waits for the deleted row's lock", Duration.ofSeconds(20),
					() -> blockedBy(pid) || taking.isDone());
			assertThat(taking).as("the take, before the row is created again").isNotDone();
			update(recreator, insert, key);
			recreator.commit();
			return taking.get(30, TimeUnit.SECONDS);
		}
	}

	private boolean blockedBy(long pid) {
		try (Connection connection = this.pair.otherDataSource.getConnection()) {
			return count("SELECT COUNT(*) FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))", pid,
					connection) > 0;
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private long count(String query, String key) throws SQLException {
		try (Connection connection = this.pair.otherDataSource.getConnection()) {
			return count(query, key, connection);
		}
	}

	private static long count(String query, Object parameter, Connection connection) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(query)) {
			if (parameter != null) {
				statement.setObject(1, parameter);
			}
			try (ResultSet result = statement.executeQuery()) {
				result.next();
				return result.getLong(1);
			}
		}
	}

	private static void update(Connection connection, String sql, String key) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setString(1, key);
			statement.executeUpdate();
		}
	}

	@FunctionalInterface
	private interface Call<T> {

		T call() throws Exception;

	}

}
