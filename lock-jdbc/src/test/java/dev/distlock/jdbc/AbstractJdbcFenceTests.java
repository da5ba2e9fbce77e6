package dev.distlock.jdbc;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.StaleTokenException;
import dev.distlock.contract.Conditions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.UnexpectedRollbackException;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link JdbcFence} on a real database: tokens from real leases of the JDBC store, the
 * caller's writes through {@link JdbcClient} in Spring-managed transactions.
 */
@Tag("server")
abstract class AbstractJdbcFenceTests {

	private static final String FENCE_TABLE = "fence_test_fence";

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private HikariDataSource dataSource;

	private JdbcFence fence;

	private DefaultLockTemplate locks;

	private JdbcClient jdbc;

	private TransactionTemplate transactions;

	private final String resource = "account:" + UUID.randomUUID();

	abstract HikariDataSource newDataSource();

	/** Counts the sessions waiting for a row lock on the fence table. */
	abstract String lockWaitsSql();

	@BeforeEach
	void setUp() {
		this.dataSource = newDataSource();
		this.closeables.add(this.dataSource);
		JdbcLockProvider provider = JdbcLockProvider.builder(this.dataSource).tableName("fence_test_lock").build();
		this.closeables.add(provider);
		provider.createTableIfMissing();
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		this.locks = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(30))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(false)
					.retryInterval(Duration.ofMillis(20))
					.build());
		this.closeables.add(this.locks);
		this.fence = JdbcFence.builder(this.dataSource).tableName(FENCE_TABLE).timeout(Duration.ofSeconds(30)).build();
		this.fence.createTableIfMissing();
		this.jdbc = JdbcClient.create(this.dataSource);
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS fence_test_account (id VARCHAR(255) PRIMARY KEY, val VARCHAR(64))")
			.update();
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS fence_test_entry (id VARCHAR(255), token BIGINT)").update();
		this.jdbc.sql("INSERT INTO fence_test_account (id, val) VALUES (?, 'initial')").param(this.resource).update();
		this.transactions = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
	}

	@AfterEach
	void tearDown() throws Exception {
		Collections.reverse(this.closeables);
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	@Test
	void aPausedHoldersWriteAfterANewerHoldersIsRefused() {
		String key = "fence:" + UUID.randomUUID();
		Lease paused = this.locks.acquire(key,
				LockOptions.builder().leaseTime(Duration.ofMillis(200)).autoRenew(false).build());
		// Waits until the paused holder's lease has run out, then takes the lock.
		Lease newer = this.locks.acquire(key, LockOptions.defaults());
		assertThat(newer.fencingToken()).isGreaterThan(paused.fencingToken());
		update(newer.fencingToken(), "newer");
		assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> update(paused.fencingToken(), "paused"))
			.satisfies((ex) -> {
				assertThat(ex.getResource()).isEqualTo(this.resource);
				assertThat(ex.getToken()).isEqualTo(paused.fencingToken());
				assertThat(ex.getHighestToken()).isEqualTo(newer.fencingToken());
				assertThat(ex).hasMessageContaining(this.resource);
			});
		assertThat(value()).isEqualTo("newer");
		newer.release();
	}

	@Test
	void insertsAreFencedToo() {
		long[] tokens = tokens(2);
		insertEntry(tokens[1]);
		assertThatExceptionOfType(StaleTokenException.class).isThrownBy(() -> insertEntry(tokens[0]));
		assertThat(entries()).containsExactly(tokens[1]);
	}

	@Test
	void theSameTokenIsAcceptedTwice() {
		long token = tokens(1)[0];
		update(token, "first");
		update(token, "second");
		assertThat(value()).isEqualTo("second");
	}

	@Test
	void aRefusalRollsBackTheCallersOwnWritesInTheTransaction() {
		long[] tokens = tokens(2);
		update(tokens[1], "newer");
		assertThatExceptionOfType(StaleTokenException.class)
			.isThrownBy(() -> this.transactions.executeWithoutResult((status) -> {
				this.jdbc.sql("UPDATE fence_test_account SET val = 'stale' WHERE id = ?").param(this.resource).update();
				this.fence.check(this.resource, tokens[0]);
			}));
		assertThat(value()).isEqualTo("newer");
	}

	@Test
	void aRefusalCaughtByTheCallerStillRollsTheTransactionBack() {
		long[] tokens = tokens(2);
		update(tokens[1], "newer");
		assertThatExceptionOfType(UnexpectedRollbackException.class)
			.isThrownBy(() -> this.transactions.executeWithoutResult((status) -> {
				this.jdbc.sql("UPDATE fence_test_account SET val = 'stale' WHERE id = ?").param(this.resource).update();
				try {
					this.fence.check(this.resource, tokens[0]);
				}
				catch (StaleTokenException ex) {
					// a caller that swallows the refusal must not commit its write
				}
			}));
		assertThat(value()).isEqualTo("newer");
	}

	@Test
	void aCheckOutsideATransactionIsRefused() throws Exception {
		long token = tokens(1)[0];
		assertThatIllegalStateException().isThrownBy(() -> this.fence.check(this.resource, token))
			.withMessageContaining("must run in a transaction");
		try (Connection connection = this.dataSource.getConnection()) {
			assertThatIllegalStateException().isThrownBy(() -> this.fence.check(connection, this.resource, token))
				.withMessageContaining("setAutoCommit(false)");
		}
	}

	@Test
	void aPlainJdbcTransactionIsRolledBackOnRefusal() throws Exception {
		long[] tokens = tokens(2);
		update(tokens[1], "newer");
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(false);
			try (var statement = connection.prepareStatement("UPDATE fence_test_account SET val = ? WHERE id = ?")) {
				statement.setString(1, "stale");
				statement.setString(2, this.resource);
				statement.executeUpdate();
			}
			assertThatExceptionOfType(StaleTokenException.class)
				.isThrownBy(() -> this.fence.check(connection, this.resource, tokens[0]));
			connection.commit();
			connection.setAutoCommit(true);
		}
		assertThat(value()).isEqualTo("newer");
	}

	@Test
	void aNewerWriterWaitsForAnOlderOneThatHasCheckedUntilItCommits() throws Exception {
		long[] tokens = tokens(2);
		CountDownLatch checked = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			CompletableFuture<Void> older = CompletableFuture
				.runAsync(() -> this.transactions.executeWithoutResult((status) -> {
					this.fence.check(this.resource, tokens[0]);
					checked.countDown();
					await(commit);
					this.jdbc.sql("UPDATE fence_test_account SET val = 'older' WHERE id = ?")
						.param(this.resource)
						.update();
				}), threads);
			await(checked);
			CompletableFuture<Void> newer = CompletableFuture.runAsync(() -> update(tokens[1], "newer"), threads);
			// The newer writer must queue behind the older one's row lock (or, with a
			// broken fence, finish first and be overwritten).
			Conditions.await("the newer writer waits for the fence row or is done", Duration.ofSeconds(20),
					() -> newer.isDone() || lockWaits() > 0);
			commit.countDown();
			older.get(20, TimeUnit.SECONDS);
			newer.get(20, TimeUnit.SECONDS);
		}
		finally {
			commit.countDown();
			threads.shutdownNow();
		}
		assertThat(value()).isEqualTo("newer");
	}

	@Test
	void concurrentHoldersNeverLetAnOlderTokenOverwriteANewerOne() throws Exception {
		int writers = 16;
		long[] tokens = tokens(writers);
		List<Long> shuffled = new ArrayList<>();
		for (long token : tokens) {
			shuffled.add(token);
		}
		Collections.shuffle(shuffled);
		ConcurrentLinkedQueue<Long> accepted = new ConcurrentLinkedQueue<>();
		ConcurrentLinkedQueue<StaleTokenException> refused = new ConcurrentLinkedQueue<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(writers);
		try {
			List<CompletableFuture<Void>> runs = new ArrayList<>();
			for (long token : shuffled) {
				runs.add(CompletableFuture.runAsync(() -> {
					await(start);
					try {
						update(token, "v" + token);
						accepted.add(token);
					}
					catch (StaleTokenException ex) {
						refused.add(ex);
					}
				}, threads));
			}
			start.countDown();
			CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		}
		finally {
			threads.shutdownNow();
		}
		long highest = tokens[writers - 1];
		assertThat(value()).isEqualTo("v" + highest);
		assertThat(accepted).contains(highest);
		assertThat(accepted.size() + refused.size()).isEqualTo(writers);
		assertThat(refused).allSatisfy((ex) -> {
			assertThat(ex.getToken()).isLessThan(ex.getHighestToken());
			assertThat(ex.getHighestToken()).isLessThanOrEqualTo(highest);
		});
		assertThat(this.jdbc.sql("SELECT token FROM " + FENCE_TABLE + " WHERE resource = ?")
			.param(this.resource)
			.query(Long.class)
			.single()).isEqualTo(highest);
	}

	/** The tokens of {@code count} leases taken one after another, rising. */
	private long[] tokens(int count) {
		String key = "fence:" + UUID.randomUUID();
		long[] tokens = new long[count];
		for (int i = 0; i < count; i++) {
			Lease lease = this.locks.acquire(key, LockOptions.defaults());
			tokens[i] = lease.fencingToken();
			lease.release();
		}
		return tokens;
	}

	private void update(long token, String value) {
		this.transactions.executeWithoutResult((status) -> {
			this.fence.check(this.resource, token);
			this.jdbc.sql("UPDATE fence_test_account SET val = ? WHERE id = ?").params(value, this.resource).update();
		});
	}

	private void insertEntry(long token) {
		this.transactions.executeWithoutResult((status) -> {
			this.fence.check(this.resource, token);
			this.jdbc.sql("INSERT INTO fence_test_entry (id, token) VALUES (?, ?)")
				.params(this.resource, token)
				.update();
		});
	}

	private String value() {
		return this.jdbc.sql("SELECT val FROM fence_test_account WHERE id = ?")
			.param(this.resource)
			.query(String.class)
			.single();
	}

	private List<Long> entries() {
		return this.jdbc.sql("SELECT token FROM fence_test_entry WHERE id = ?")
			.param(this.resource)
			.query(Long.class)
			.list();
	}

	private int lockWaits() {
		return this.jdbc.sql(lockWaitsSql()).query(Integer.class).single();
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("Timed out waiting for the other writer");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
