package dev.distlock.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static dev.distlock.jdbc.TestDatabases.whileStoreFails;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the JDBC store does beyond the contract suite, on a real server: transactions,
 * bounded calls, fences across a sweep, batched renewal, connections per waiter,
 * connections killed by the server, database time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
abstract class AbstractJdbcStoreTests {

	static final Duration LONG = Duration.ofSeconds(30);

	/** This class's own table on the shared server. */
	static final String TABLE = "store_lock";

	HikariDataSource dataSource;

	HikariDataSource otherDataSource;

	JdbcLockProvider provider;

	JdbcLockProvider other;

	/** A pool with Hikari's default settings on the server under test. */
	abstract HikariDataSource newDataSource();

	/** SQL that moves every lease of {@link #TABLE} two days back. */
	abstract String ageAllRowsSql();

	/**
	 * Ends, from the server's side, every connection of the test user but the caller's.
	 */
	abstract void terminateOtherConnections(JdbcTemplate admin);

	@BeforeEach
	void start() {
		this.dataSource = newDataSource();
		this.otherDataSource = newDataSource();
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

	static String key() {
		return "jdbc-" + UUID.randomUUID();
	}

	/**
	 * A lock taken inside a transaction on the same DataSource is seen by others at once
	 * (it does not wait for the commit) and stays when the transaction rolls back: the
	 * store never uses the transaction's connection, neither on a worker thread nor on
	 * the caller's own (the transaction's) thread.
	 */
	@Test
	void aLockTakenInATransactionIsSeenAtOnceAndSurvivesItsRollback() {
		for (JdbcLockProvider inTransaction : List.of(onWorkers(this.dataSource), direct(this.dataSource))) {
			try (inTransaction) {
				String key = key();
				TransactionTemplate transaction = new TransactionTemplate(
						new DataSourceTransactionManager(this.dataSource));
				JdbcTemplate jdbc = new JdbcTemplate(this.dataSource);
				LockHandle handle = transaction.execute((status) -> {
					// The transaction holds a connection of the pool from here on.
					jdbc.queryForObject("SELECT 1", Integer.class);
					LockHandle inside = acquired(
							LockAttempt.join(inTransaction.tryLock(LockRequest.exclusive(key, LONG))));
					assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
						.as("seen by others before the commit")
						.isInstanceOf(LockAttempt.Busy.class);
					status.setRollbackOnly();
					return inside;
				});
				assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
					.as("still held after the rollback")
					.isInstanceOf(LockAttempt.Busy.class);
				assertThat(handle.release()).isTrue();
				acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)))).release();
			}
		}
	}

	/**
	 * With every connection of a pool with default settings (Hikari: 10, 30 s to wait for
	 * one) borrowed elsewhere, a call fails within the store timeout instead of waiting
	 * 30 s for the pool: on a worker thread (the caller gives up), and on the caller's
	 * own thread (the watchdog interrupts its wait for the pool, and clears the interrupt
	 * again).
	 */
	@Test
	void aCallOnAnExhaustedPoolFailsWithinTheStoreTimeout() throws Exception {
		try (JdbcLockProvider onWorkers = onWorkers(this.dataSource);
				JdbcLockProvider direct = direct(this.dataSource)) {
			for (JdbcLockProvider provider : List.of(onWorkers, direct)) {
				List<Connection> borrowed = new ArrayList<>();
				try {
					for (int i = 0; i < this.dataSource.getMaximumPoolSize(); i++) {
						borrowed.add(this.dataSource.getConnection());
					}
					long start = System.nanoTime();
					assertThatExceptionOfType(LockBackendException.class)
						.isThrownBy(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key(), LONG))))
						.withMessageContaining("did not answer within 3000ms");
					assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
					assertThat(Thread.interrupted()).as("no interrupt left behind").isFalse();
				}
				finally {
					for (Connection connection : borrowed) {
						connection.close();
					}
				}
				String key = key();
				Conditions.await("the store works again once connections are back", Duration.ofSeconds(40),
						() -> whileStoreFails(() -> LockAttempt
							.join(provider.tryLock(LockRequest.exclusive(key, LONG))) instanceof LockAttempt.Acquired));
			}
		}
	}

	/** A provider whose calls all run on its worker threads. */
	/**
	 * Instances that start together all create the tables (one of them wins each race,
	 * the others find its tables) instead of failing at startup.
	 */
	@Test
	void instancesStartingTogetherAllCreateTheTables() throws Exception {
		int instances = 8;
		ExecutorService starts = Executors.newFixedThreadPool(instances);
		try {
			for (int round = 0; round < 5; round++) {
				String table = "race_" + UUID.randomUUID().toString().substring(0, 8);
				CountDownLatch go = new CountDownLatch(1);
				List<Future<?>> created = new ArrayList<>();
				for (int i = 0; i < instances; i++) {
					created.add(starts.submit(() -> {
						go.await();
						try (JdbcLockProvider provider = new JdbcLockProvider(this.dataSource, table)) {
							provider.createTableIfMissing();
						}
						JdbcFence.builder(this.dataSource).tableName(table + "_f").build().createTableIfMissing();
						JdbcTransactionLocks.builder(this.dataSource)
							.tableName(table + "_t")
							.build()
							.createTableIfMissing();
						return null;
					}));
				}
				go.countDown();
				for (Future<?> instance : created) {
					instance.get(LONG.toSeconds(), TimeUnit.SECONDS);
				}
				try (JdbcLockProvider provider = new JdbcLockProvider(this.dataSource, table)) {
					acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key(), LONG)))).release();
				}
			}
		}
		finally {
			starts.shutdownNow();
		}
	}

	static JdbcLockProvider onWorkers(DataSource dataSource) {
		return JdbcLockProvider.builder(dataSource).tableName(TABLE).directWindow(Duration.ZERO).build();
	}

	/**
	 * A provider whose calls run on their caller's thread from its first successful call
	 * on, which this makes.
	 */
	static JdbcLockProvider direct(DataSource dataSource) {
		JdbcLockProvider provider = JdbcLockProvider.builder(dataSource)
			.tableName(TABLE)
			.directWindow(Duration.ofDays(1))
			.build();
		provider.validateSchema();
		return provider;
	}

	/**
	 * Rows are never deleted on release, and a swept row taken again starts its fence at
	 * the database's clock: the key's next token is above the last one.
	 */
	@Test
	void fencingTokensKeepRisingAcrossASweep() {
		String key = key();
		LockHandle first = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(first.release()).isTrue();
		LockHandle second = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(second.release()).isTrue();
		new JdbcTemplate(this.dataSource).update(ageAllRowsSql());
		assertThat(this.provider.sweep()).isPositive();
		assertThat(new JdbcTemplate(this.dataSource).queryForObject("SELECT COUNT(*) FROM " + TABLE + " WHERE name = ?",
				Integer.class, key))
			.isZero();
		LockHandle third = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
		assertThat(third.release()).isTrue();
	}

	/** A sweep leaves held leases and recently released rows alone. */
	@Test
	void aSweepDeletesOnlyRowsIdleForLong() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		String released = key();
		acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(released, LONG)))).release();
		this.provider.sweep();
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(new JdbcTemplate(this.dataSource).queryForObject("SELECT COUNT(*) FROM " + TABLE + " WHERE name = ?",
				Integer.class, released))
			.isOne();
		assertThat(held.release()).isTrue();
	}

	/**
	 * One renewal call reports each lease: renewed when still held, not when it ran out
	 * and another owner took it; the renewed ones then outlive their first lease.
	 */
	@Test
	void batchRenewalReportsEachLease() {
		Duration shortLease = Duration.ofMillis(500);
		String lost = key();
		LockHandle a = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key(), LONG))));
		LockHandle b = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(lost, shortLease))));
		LockHandle c = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key(), LONG))));
		Conditions.await("the lease of b runs out and another owner takes it", Duration.ofSeconds(10), () -> LockAttempt
			.join(this.other.tryLock(LockRequest.exclusive(lost, LONG))) instanceof LockAttempt.Acquired);
		Boolean[] outcome = new Boolean[3];
		this.provider.renewAll(List.of(a, b, c), List.of(LONG, LONG, LONG), new BatchRenewal.RenewalResults() {

			@Override
			public void renewed(int index, boolean renewed) {
				outcome[index] = renewed;
			}

			@Override
			public void failed(int index, RuntimeException failure) {
				throw failure;
			}

		});
		assertThat(outcome).containsExactly(true, false, true);
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(a.key(), LONG))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(c.key(), LONG))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(a.release()).isTrue();
		assertThat(c.release()).isTrue();
	}

	/**
	 * Many threads of one JVM waiting for a held key borrow at most a few pooled
	 * connections: one of them asks the store at a time (the local queue), and waiting
	 * holds none.
	 */
	@Test
	void manyWaitersBorrowAFewConnections() throws Exception {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))));
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(60))
					.leaseTime(LONG)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		int threads = 20;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		AtomicInteger maxActive = new AtomicInteger();
		int waitingMax;
		AtomicBoolean sampling = new AtomicBoolean(true);
		Thread sampler = new Thread(() -> {
			while (sampling.get()) {
				maxActive.accumulateAndGet(this.dataSource.getHikariPoolMXBean().getActiveConnections(), Math::max);
				Thread.onSpinWait();
			}
		});
		try {
			sampler.start();
			CountDownLatch started = new CountDownLatch(threads);
			AtomicInteger done = new AtomicInteger();
			List<Future<?>> results = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				results.add(pool.submit(() -> {
					started.countDown();
					try (Lease lease = template.acquire(key, LockOptions.defaults())) {
						done.incrementAndGet();
					}
				}));
			}
			started.await(10, TimeUnit.SECONDS);
			Conditions.await("the waiters are waiting", Duration.ofSeconds(10), () -> this.provider.subscribedKeys() > 0
					|| !(this.provider.releaseSignals() instanceof PostgresReleaseSignals));
			// Let the waiters wait a while: several retry intervals.
			Thread.sleep(1500);
			assertThat(done).hasValue(0);
			waitingMax = maxActive.get();
			assertThat(held.release()).isTrue();
			for (Future<?> result : results) {
				result.get(60, TimeUnit.SECONDS);
			}
			assertThat(done).hasValue(threads);
		}
		finally {
			sampling.set(false);
			sampler.join();
			pool.shutdownNow();
			scheduler.close();
		}
		// One attempt at a time, plus on PostgreSQL the release listener's connection
		// (from
		// the pool here, as a provider built without a listener data source does).
		assertThat(waitingMax).as("pooled connections borrowed at once by %d waiting threads", threads)
			.isLessThanOrEqualTo(2);
		// Hand-offs: a release, an owner check after a local hand-over, the next acquire
		// and the listener may overlap.
		assertThat(maxActive.get()).as("pooled connections borrowed at once while they take turns")
			.isLessThanOrEqualTo(5);
	}

	/**
	 * A connection ended by the server (an administrator, a failover) costs at most a
	 * failed call: the lock stays held, and its holder renews and releases it on fresh
	 * connections.
	 */
	@Test
	void aConnectionKilledByTheServerLosesNoLock() {
		String key = key();
		LockHandle held = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG))));
		terminateOtherConnections(new JdbcTemplate(adminDataSource()));
		Conditions.await("the holder renews on a fresh connection", Duration.ofSeconds(20),
				() -> whileStoreFails(() -> held.renew(LONG)));
		assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(held.release()).isTrue();
		acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)))).release();
	}

	private HikariDataSource admin;

	private HikariDataSource adminDataSource() {
		if (this.admin == null) {
			this.admin = newDataSource();
		}
		return this.admin;
	}

	@AfterEach
	void closeAdmin() {
		if (this.admin != null) {
			this.admin.close();
		}
	}

	/**
	 * Leases run on the database's clock: a JVM in another time zone (here UTC+14) takes
	 * and frees a lease exactly when the database says, and the row's expiry is the
	 * database's time plus the lease.
	 */
	@Test
	void leasesFollowTheDatabaseClockWhateverTheJvmTimeZone() {
		TimeZone before = TimeZone.getDefault();
		try {
			TimeZone.setDefault(TimeZone.getTimeZone("Pacific/Kiritimati"));
			String key = key();
			// a lease long enough for the busy check on a loaded machine (a CI run took
			// more than 300 ms between the two calls)
			acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(3)))));
			assertThat(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG))))
				.isInstanceOf(LockAttempt.Busy.class);
			TimeZone.setDefault(TimeZone.getTimeZone("America/Adak"));
			AtomicReference<LockHandle> next = new AtomicReference<>();
			Conditions.await("the lease runs out on the database's clock", Duration.ofSeconds(20), () -> {
				if (LockAttempt.join(this.other
					.tryLock(LockRequest.exclusive(key, LONG))) instanceof LockAttempt.Acquired acquired) {
					next.set(acquired.handle());
				}
				return next.get() != null;
			});
			long remainingMillis = new JdbcTemplate(this.dataSource).queryForObject(remainingMillisSql(), Long.class,
					key);
			assertThat(remainingMillis).isBetween(LONG.toMillis() - 5000, LONG.toMillis());
			assertThat(next.get().release()).isTrue();
		}
		finally {
			TimeZone.setDefault(before);
		}
	}

	/**
	 * SQL for the remaining lease of the row of key ?, in ms, on the database's clock.
	 */
	abstract String remainingMillisSql();

}
