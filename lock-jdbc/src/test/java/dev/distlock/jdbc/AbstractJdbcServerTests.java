package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static dev.distlock.jdbc.TestDatabases.whileStoreFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDBC store against a server of its own that the tests stop, pause and restart, and
 * whose statistics count the store's statements.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
abstract class AbstractJdbcServerTests {

	static final Duration LONG = Duration.ofSeconds(30);

	/** Longer than a restart of the server takes on a loaded machine. */
	static final Duration RESTART_LEASE = Duration.ofMinutes(3);

	static final String TABLE = "fault_lock";

	private DatabaseServer server;

	private HikariDataSource dataSource;

	private HikariDataSource otherDataSource;

	private JdbcLockProvider provider;

	private JdbcLockProvider other;

	abstract DatabaseServer startServer();

	/** The statements of one multi-key lease's release. */
	long multiKeyReleaseStatements(int keys) {
		return 1;
	}

	@BeforeEach
	void start() {
		if (this.server == null) {
			this.server = startServer();
		}
		this.dataSource = this.server.newDataSource();
		this.otherDataSource = this.server.newDataSource();
		this.provider = new JdbcLockProvider(this.dataSource, TABLE);
		this.provider.createTableIfMissing();
		this.other = new JdbcLockProvider(this.otherDataSource, TABLE);
	}

	@AfterEach
	void stop() {
		this.provider.close();
		this.other.close();
		this.dataSource.close();
		this.otherDataSource.close();
	}

	@AfterAll
	void closeServer() {
		if (this.server != null) {
			this.server.close();
		}
	}

	static String key() {
		return "server-" + UUID.randomUUID();
	}

	/**
	 * A multi-key lease held through the template frees all its keys with one statement
	 * on PostgreSQL, however many keys it has (one per key elsewhere), and every key is
	 * free for another provider afterwards.
	 */
	@Test
	void aMultiKeyLeaseIsReleasedInAsFewStatementsAsTheDatabaseAllows() {
		List<String> keys = List.of(key(), key(), key(), key(), key());
		try (RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate template = new DefaultLockTemplate(this.provider, scheduler,
						LockOptions.builder()
							.waitTime(Duration.ofSeconds(10))
							.leaseTime(LONG)
							.autoRenew(true)
							.retryInterval(Duration.ofMillis(100))
							.build())) {
			MultiLease lease = template.acquireAll(keys, LockOptions.defaults());
			this.server.resetStatements();
			lease.release();
			assertThat(this.server.statementCount(TABLE)).as("release statements")
				.isEqualTo(multiKeyReleaseStatements(keys.size()));
		}
		for (String key : keys) {
			assertThat(acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)))).release())
				.isTrue();
		}
	}

	/**
	 * An uncontended cycle on a key that has its row costs two statements (acquire,
	 * release), and one renewal tick one statement for all held leases, as the server's
	 * own statistics count them.
	 */
	@Test
	void statementsPerCycleAndPerRenewalTick() {
		String key = key();
		acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG)))).release();
		int cycles = 50;
		this.server.resetStatements();
		for (int i = 0; i < cycles; i++) {
			assertThat(acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG)))).release())
				.isTrue();
		}
		assertThat(this.server.statementCount(TABLE)).as("statements for %d uncontended cycles", cycles)
			.isEqualTo(2L * cycles);
		List<LockHandle> held = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			held.add(acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key(), LONG)))));
		}
		this.server.resetStatements();
		boolean[] renewed = new boolean[held.size()];
		this.provider.renewAll(held, held.stream().map((h) -> LONG).toList(), new BatchRenewal.RenewalResults() {

			@Override
			public void renewed(int index, boolean ok) {
				renewed[index] = ok;
			}

			@Override
			public void failed(int index, RuntimeException failure) {
				throw failure;
			}

		});
		assertThat(this.server.statementCount(TABLE)).as("statements to renew %d leases", held.size()).isOne();
		for (int i = 0; i < renewed.length; i++) {
			assertThat(renewed[i]).as("lease %d renewed", i).isTrue();
			assertThat(held.get(i).release()).isTrue();
		}
	}

	/**
	 * A server that stops answering (SIGSTOP) fails every call within the store timeout,
	 * with the pool's and the driver's default timeouts (Hikari would wait 30 s for a
	 * connection, the driver forever for a reply); once it answers again, so does the
	 * store.
	 */
	@Test
	void aHungServerFailsCallsWithinTheStoreTimeout() {
		assertAHungServerFailsCallsWithinTheStoreTimeout(this.server, this.provider, this.other, this.otherDataSource);
	}

	static void assertAHungServerFailsCallsWithinTheStoreTimeout(DatabaseServer server, JdbcLockProvider provider,
			JdbcLockProvider other, DataSource otherDataSource) {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG))));
		// Its calls run on the caller's thread from here on: its statement to the hung
		// server is aborted by the watchdog.
		JdbcLockProvider direct = JdbcLockProvider.builder(otherDataSource)
			.tableName(TABLE)
			.directWindow(Duration.ofDays(1))
			.build();
		direct.validateSchema();
		// Each call on a thread of its own: one that outlives its deadline fails the test
		// rather than hanging it.
		ExecutorService callers = Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "hung-server-caller");
			thread.setDaemon(true);
			return thread;
		});
		server.pause();
		try {
			for (JdbcLockProvider caller : List.of(direct, other, other)) {
				Future<?> call = callers
					.submit(() -> LockAttempt.join(caller.tryLock(LockRequest.exclusive(key(), LONG))));
				assertThatThrownBy(() -> call.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
					.cause()
					.isInstanceOf(LockBackendException.class)
					.hasMessageContaining("did not answer within 3000ms");
			}
			Future<?> renewal = callers.submit(() -> held.renew(LONG));
			assertThatThrownBy(() -> renewal.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
				.cause()
				.isInstanceOf(LockBackendException.class);
		}
		finally {
			server.resume();
			direct.close();
			callers.shutdown();
		}
		Conditions.await("the store answers again", Duration.ofSeconds(30),
				() -> whileStoreFails(() -> held.renew(LONG)));
		assertThat(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LONG))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(held.release()).isTrue();
	}

	/**
	 * A transaction lock asked of a server that stopped answering fails within the wait
	 * time plus twice the statement timeout (9 s here), with the driver's and the pool's
	 * default settings, and the transaction with it.
	 */
	@Test
	void aTransactionLockOnAHungServerFailsWithinItsBound() {
		assertATransactionLockOnAHungServerFails(this.server, this.otherDataSource);
	}

	static void assertATransactionLockOnAHungServerFails(DatabaseServer server, DataSource dataSource) {
		JdbcTransactionLocks locks = new JdbcTransactionLocks(dataSource);
		locks.createTableIfMissing();
		TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(dataSource));
		String key = key();
		// The key's row exists: the wait is on the transaction's own connection.
		transactions.executeWithoutResult((status) -> locks.lock(key));
		CountDownLatch begun = new CountDownLatch(1);
		CountDownLatch paused = new CountDownLatch(1);
		AtomicReference<RuntimeException> failure = new AtomicReference<>();
		ExecutorService callers = Executors.newSingleThreadExecutor((task) -> {
			Thread thread = new Thread(task, "hung-server-transaction");
			thread.setDaemon(true);
			return thread;
		});
		Future<?> call = callers.submit(() -> {
			try {
				transactions.executeWithoutResult((status) -> {
					new JdbcTemplate(dataSource).queryForObject("SELECT 1", Integer.class);
					begun.countDown();
					Conditions.await("the server paused", Duration.ofSeconds(30), () -> paused.getCount() == 0);
					try {
						locks.tryLock(key, Duration.ofSeconds(1));
					}
					catch (RuntimeException ex) {
						failure.set(ex);
						throw ex;
					}
				});
			}
			catch (RuntimeException ex) {
				// The rollback on the broken connection may fail too.
			}
		});
		try {
			Conditions.await("the transaction began", Duration.ofSeconds(30), () -> begun.getCount() == 0);
			server.pause();
			paused.countDown();
			assertThatCode(() -> call.get(20, TimeUnit.SECONDS)).as("the call's end").doesNotThrowAnyException();
			assertThat(failure.get()).isInstanceOf(LockBackendException.class);
		}
		finally {
			server.resume();
			callers.shutdown();
		}
		Conditions.await("the server answers again", Duration.ofSeconds(30), () -> {
			try {
				transactions.executeWithoutResult((status) -> locks.lock(key));
				return true;
			}
			catch (RuntimeException ex) {
				return false;
			}
		});
	}

	/**
	 * A database restart keeps the locks (they are rows), and the store finds its way
	 * back through the pool's dead connections.
	 */
	@Test
	void locksSurviveADatabaseRestart() {
		assertLocksSurviveARestart(this.server, this.provider, this.other);
	}

	/**
	 * A lock held by {@code provider}, with a token block, survives a clean restart of
	 * {@code server}: {@code other} finds it busy, its holder renews and releases it, and
	 * the next token lies past the block.
	 */
	static void assertLocksSurviveARestart(DatabaseServer server, JdbcLockProvider provider, JdbcLockProvider other) {
		String key = key();
		TokenBlock held = (TokenBlock) acquired(
				LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, RESTART_LEASE).withTokens(33))));
		server.stop();
		server.restart();
		Conditions.await("the other provider sees the lock held after the restart", Duration.ofSeconds(30),
				() -> whileStoreFails(() -> LockAttempt
					.join(other.tryLock(LockRequest.exclusive(key, LONG))) instanceof LockAttempt.Busy));
		Conditions.await("the holder renews after the restart", Duration.ofSeconds(30),
				() -> whileStoreFails(() -> held.renew(LONG)));
		assertThat(held.release()).isTrue();
		LockHandle next = acquired(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(next.fencingToken()).isGreaterThan(held.lastToken());
		assertThat(next.release()).isTrue();
	}

	/** A killed server (kill -9) comes back with every committed lock. */
	@Test
	void locksSurviveAKilledServer() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, RESTART_LEASE))));
		this.server.kill();
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		this.server.restart();
		Conditions.await("the other provider sees the lock held", Duration.ofSeconds(30),
				() -> whileStoreFails(() -> LockAttempt
					.join(this.other.tryLock(LockRequest.exclusive(key, LONG))) instanceof LockAttempt.Busy));
		assertThat(held.release()).isTrue();
	}

}
