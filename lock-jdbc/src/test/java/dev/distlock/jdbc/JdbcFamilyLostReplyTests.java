package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Releases of read holds, permits and multi-key locks whose reply was lost after the
 * server committed them (a {@link LostReplyDataSource} over a real pool), on PostgreSQL
 * and MariaDB: run again, they find the hold gone, and while its lease surely still ran
 * that is the earlier run's release, not a loss; the key and the permit are free at once.
 * A release run again after the lease may have run out still reports the loss.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class JdbcFamilyLostReplyTests {

	private static final String TABLE = "family_lost_reply_lock";

	private static final Duration LONG = Duration.ofSeconds(30);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private LostReplyDataSource faulty;

	private JdbcLockProvider provider;

	private JdbcLockProvider other;

	static List<String> databases() {
		// "mysql": MySQL 8's statements on the MariaDB server.
		return List.of("postgresql", "mariadb", "mysql");
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.closeables.clear();
	}

	/** A provider over {@code dataSource}, closed after the test. */
	private JdbcLockProvider provider(javax.sql.DataSource dataSource, String database) {
		JdbcLockProvider provider = JdbcPair.provider(dataSource, TABLE,
				database.equals("mysql") ? JdbcLockDialect.MYSQL : null);
		this.closeables.add(provider);
		return provider;
	}

	private HikariDataSource pool(String database) {
		DatabaseServer server = database.equals("postgresql") ? PostgresServer.shared() : MariaDbServer.shared();
		HikariDataSource pool = server.newDataSource();
		this.closeables.add(pool);
		return pool;
	}

	private static String key() {
		return "family-lost-reply-" + UUID.randomUUID();
	}

	/**
	 * A provider whose replies the test can lose, and another over a pool of its own, on
	 * {@code database}; both closed after the test.
	 */
	private void open(String database) {
		this.faulty = new LostReplyDataSource(pool(database));
		this.provider = provider(this.faulty, database);
		this.other = provider(pool(database), database);
		this.other.createTableIfMissing();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aReadReleaseWhoseReplyWasLostIsNotALoss(String database) {
		open(database);
		String key = key();
		LockHandle read = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LONG))));
		this.faulty.loseNextCommitReply("DELETE FROM " + TABLE + "_reader");
		assertThat(read.release()).as("released").isTrue();
		assertThat(this.faulty.repliesLost()).isOne();
		LockHandle writer = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(writer.fencingToken()).isGreaterThan(read.fencingToken());
		assertThat(writer.release()).isTrue();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aPermitReleaseWhoseReplyWasLostIsNotALoss(String database) {
		open(database);
		String key = key();
		LockHandle permit = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 1, LONG))));
		this.faulty.loseNextCommitReply("DELETE FROM " + TABLE + "_permit");
		assertThat(permit.release()).as("released").isTrue();
		assertThat(this.faulty.repliesLost()).isOne();
		LockHandle next = acquired(LockAttempt.join(this.other.tryLock(LockRequest.permit(key, 1, LONG))));
		assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
		assertThat(next.release()).isTrue();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aMultiKeyReleaseWhoseReplyWasLostIsNotALoss(String database) {
		open(database);
		List<String> keys = List.of(key(), key(), key()).stream().sorted().toList();
		LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LONG)));
		List<LockHandle> held = ((LockAttempt.AcquiredAll) attempt).handles();
		this.faulty
			.loseNextCommitReply("UPDATE " + TABLE + (database.equals("postgresql") ? " l" : "") + " SET owner = NULL");
		assertThat(this.provider.releaseAll(held)).as("released").containsExactly(true, true, true);
		assertThat(this.faulty.repliesLost()).isOne();
		for (int i = 0; i < keys.size(); i++) {
			LockHandle next = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(keys.get(i), LONG))));
			assertThat(next.fencingToken()).isGreaterThan(held.get(i).fencingToken());
			assertThat(next.release()).isTrue();
		}
	}

	/**
	 * A permit taken whose reply was lost: the attempt, run again, finds the permit its
	 * first run took and answers with it, rather than take a second one or leave that one
	 * held by nobody.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aPermitTakenWhoseReplyWasLostIsTheOnePermitHeld(String database) {
		open(database);
		String key = key();
		LockHandle first = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LONG))));
		this.faulty.loseNextCommitReply(TABLE + "_permit (name, owner");
		LockHandle permit = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LONG))));
		assertThat(this.faulty.repliesLost()).isOne();
		assertThat(permit.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.permit(key, 2, LONG))))
			.as("both permits held, one each")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(permit.release()).isTrue();
		assertThat(first.release()).isTrue();
	}

	/**
	 * A permit whose lease ran out and was taken by another: its release, run again after
	 * a lost reply, finds nothing and reports the loss, as its first run would have.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aReleaseRunAgainAfterTheLeaseRanOutIsStillALoss(String database) {
		open(database);
		String key = key();
		LockHandle permit = acquired(
				LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 1, Duration.ofMillis(300)))));
		List<LockHandle> next = new ArrayList<>();
		Conditions.await("the permit taken by another once its lease ran out", Duration.ofSeconds(10), () -> {
			LockAttempt attempt = LockAttempt.join(this.other.tryLock(LockRequest.permit(key, 1, LONG)));
			if (attempt instanceof LockAttempt.Acquired acquired) {
				next.add(acquired.handle());
			}
			return !next.isEmpty();
		});
		this.faulty.loseNextCommitReply("DELETE FROM " + TABLE + "_permit");
		assertThat(permit.release()).as("released").isFalse();
		assertThat(this.faulty.repliesLost()).isOne();
		assertThat(next.get(0).release()).isTrue();
	}

}
