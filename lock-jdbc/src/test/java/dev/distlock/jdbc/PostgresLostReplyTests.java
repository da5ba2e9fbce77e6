package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Statements that ran on a real PostgreSQL server but whose replies were lost (a
 * {@link LostReplyDataSource} over a real pool): an acquire that took the lock, and whose
 * retries then found the server refusing connections, is undone once the server answers
 * again; a release whose reply was lost, run again, is a release and not a loss.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class PostgresLostReplyTests {

	private static final String TABLE = "lost_reply_lock";

	private static final Duration LONG = Duration.ofSeconds(30);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private LostReplyDataSource faulty;

	private JdbcLockProvider provider;

	private JdbcLockProvider other;

	@BeforeEach
	void start() {
		HikariDataSource pool = TestDatabases.postgres();
		HikariDataSource otherPool = TestDatabases.postgres();
		this.closeables.add(pool);
		this.closeables.add(otherPool);
		this.faulty = new LostReplyDataSource(pool);
		this.provider = new JdbcLockProvider(this.faulty, TABLE);
		this.other = new JdbcLockProvider(otherPool, TABLE);
		this.closeables.add(this.provider);
		this.closeables.add(this.other);
		this.other.createTableIfMissing();
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	private static String key() {
		return "lost-reply-" + UUID.randomUUID();
	}

	private static @Nullable String owner(String key) {
		List<String> owners = new JdbcTemplate(PostgresServer.shared().dataSource())
			.queryForList("SELECT owner FROM " + TABLE + " WHERE name = ?", String.class, key);
		return owners.isEmpty() ? null : owners.get(0);
	}

	/**
	 * The acquire statement commits, its reply is lost, and every retry is refused a
	 * connection (the server restarting): the call fails, and the lock it took is undone
	 * by its owner once connections are given again, within about one retry of the undo,
	 * not after the 30 s lease; another provider then takes it.
	 */
	@Test
	void anAcquireThatTookTheLockButLostItsReplyIsUndoneOnceTheServerAnswers() {
		String key = key();
		this.faulty.loseNextReply("INSERT INTO " + TABLE, true);
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))))
			.withMessageContaining("refused");
		assertThat(this.faulty.repliesLost()).isOne();
		assertThat(owner(key)).as("the owner the lost acquire wrote").isNotNull();
		this.faulty.heal();
		Conditions.await("the lost acquisition undone", Duration.ofSeconds(3), () -> owner(key) == null);
		LockHandle next = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(next.release()).isTrue();
	}

	/**
	 * The release statement commits and its reply is lost; the call runs it again on
	 * another connection, which finds the lock free with the fence it left: the release
	 * answers that the lock was held, and the lock is free.
	 */
	@Test
	void aReleaseWhoseReplyWasLostIsNotALoss() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		this.faulty.loseNextReply("UPDATE " + TABLE + " SET owner = NULL", false);
		assertThat(held.release()).as("released").isTrue();
		assertThat(this.faulty.repliesLost()).isOne();
		LockHandle next = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
		assertThat(next.release()).isTrue();
	}

	/**
	 * A release that finds, at its first run, its row freed by someone else still reports
	 * the loss: only a re-run counts a freed row with its fence as its own.
	 */
	@Test
	void aReleaseThatFindsItsRowFreedByOthersAtItsFirstRunIsALoss() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(new JdbcTemplate(PostgresServer.shared().dataSource())
			.update("UPDATE " + TABLE + " SET owner = NULL WHERE name = ?", key)).isOne();
		assertThat(held.release()).as("released").isFalse();
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
			.isInstanceOf(LockAttempt.Acquired.class);
	}

}
