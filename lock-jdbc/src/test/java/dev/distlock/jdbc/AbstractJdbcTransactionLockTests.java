package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockAcquisitionException;
import dev.distlock.contract.Conditions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Locks held by the caller's own transaction, on a real server, through two pools (two
 * "JVMs") with default settings: each pool has its own transaction manager and its own
 * {@link JdbcTransactionLocks}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
abstract class AbstractJdbcTransactionLockTests {

	private static final Duration LONG = Duration.ofSeconds(60);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private HikariDataSource dataSource;

	private HikariDataSource otherDataSource;

	private Side one;

	private Side two;

	abstract HikariDataSource newDataSource();

	/** Counts the transactions waiting for a transaction lock on the server. */
	abstract String waitingSql();

	/** Reads the session's lock wait setting, which a wait sets for itself. */
	abstract String lockWaitSettingSql();

	/** Reads the id of the current session. */
	abstract String sessionIdSql();

	/** Ends the session {@code id} on the server, as a crash of its client would. */
	abstract void killSession(JdbcTemplate admin, long id);

	@BeforeAll
	void start() {
		this.dataSource = newDataSource();
		this.otherDataSource = newDataSource();
		this.one = new Side(this.dataSource);
		this.two = new Side(this.otherDataSource);
		this.one.locks.createTableIfMissing();
	}

	@AfterAll
	void stop() {
		this.threads.shutdownNow();
		this.dataSource.close();
		this.otherDataSource.close();
	}

	static String key() {
		return "tx-" + UUID.randomUUID();
	}

	/**
	 * Threads of two pools take turns: never two inside at once, and each holder's token
	 * is above the one before.
	 */
	@Test
	void excludesTransactionsOfTwoPools() throws Exception {
		String key = key();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		List<CompletableFuture<Void>> workers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			Side side = (t % 2 == 0) ? this.one : this.two;
			workers.add(CompletableFuture.runAsync(() -> {
				for (int i = 0; i < 20; i++) {
					side.transactions.executeWithoutResult((status) -> {
						long token = side.locks.lock(key, LONG);
						if (inside.incrementAndGet() != 1) {
							overlaps.incrementAndGet();
						}
						tokens.add(token);
						Thread.yield();
						inside.decrementAndGet();
					});
				}
			}, this.threads));
		}
		CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
		assertThat(overlaps).hasValue(0);
		assertThat(tokens).hasSize(80);
		for (int i = 1; i < tokens.size(); i++) {
			assertThat(tokens.get(i)).as("token %d", i).isGreaterThan(tokens.get(i - 1));
		}
	}

	/**
	 * Held until the holder's transaction commits: another transaction cannot take it
	 * before, and can right after, with a greater token.
	 */
	@Test
	void heldUntilCommit() throws Exception {
		heldUntilTheEnd(false);
	}

	/** Held until the holder's transaction rolls back, then free at once. */
	@Test
	void heldUntilRollback() throws Exception {
		heldUntilTheEnd(true);
	}

	private void heldUntilTheEnd(boolean rollback) throws Exception {
		String key = key();
		Holder holder = new Holder(this.one, key, rollback);
		long held = holder.start();
		this.two.transactions.executeWithoutResult((status) -> {
			assertThat(this.two.locks.tryLock(key, Duration.ZERO)).as("while held").isEmpty();
			// The failed attempt leaves the transaction usable.
			assertThat(this.two.jdbc.queryForObject("SELECT 1", Integer.class)).isOne();
		});
		holder.finish();
		this.two.transactions.executeWithoutResult((status) -> {
			OptionalLong token = this.two.locks.tryLock(key, Duration.ZERO);
			assertThat(token).as("right after the " + (rollback ? "rollback" : "commit")).isPresent();
			assertThat(token.getAsLong()).isGreaterThan(held);
		});
	}

	/**
	 * A waiter queued behind the holder gets the lock when the holder commits, within its
	 * wait time; the lock wait setting of its session is as before.
	 */
	@Test
	void aWaiterGetsTheLockWhenTheHolderCommits() throws Exception {
		String key = key();
		Holder holder = new Holder(this.one, key, false);
		long held = holder.start();
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> this.two.transactions.execute((status) -> {
			String setting = this.two.jdbc.queryForObject(lockWaitSettingSql(), String.class);
			long token = this.two.locks.lock(key, LONG);
			assertThat(this.two.jdbc.queryForObject(lockWaitSettingSql(), String.class))
				.as("the lock wait setting after the wait")
				.isEqualTo(setting);
			return token;
		}), this.threads);
		Conditions.await("the waiter waits in the database", Duration.ofSeconds(30),
				() -> waiter.isDone() || this.two.jdbc.queryForObject(waitingSql(), Long.class) > 0);
		if (waiter.isDone()) {
			waiter.join();
		}
		assertThat(waiter).isNotDone();
		holder.finish();
		assertThat(waiter.get(30, TimeUnit.SECONDS)).isGreaterThan(held);
	}

	/**
	 * No lease, yet no dead holder keeps the lock: when the holder's session dies (its
	 * JVM crashed, its connection broke), the database ends its transaction and frees the
	 * lock.
	 */
	@Test
	void aHolderWhoseSessionDiesFreesTheLock() throws Exception {
		String key = key();
		Holder holder = new Holder(this.one, key, false);
		long held = holder.start();
		this.two.transactions.executeWithoutResult(
				(status) -> assertThat(this.two.locks.tryLock(key, Duration.ZERO)).as("while held").isEmpty());
		killSession(this.two.jdbc, holder.session);
		this.two.transactions.executeWithoutResult((status) -> {
			OptionalLong token = this.two.locks.tryLock(key, LONG);
			assertThat(token).as("after the holder's session died").isPresent();
			assertThat(token.getAsLong()).isGreaterThan(held);
		});
		holder.finishQuietly();
	}

	/**
	 * With the default wait time, a busy lock ends the wait with LockAcquisitionException
	 * within that time (never an endless block), the transaction stays usable, and the
	 * lock wait setting of its session is as before.
	 */
	@Test
	void theWaitIsBoundedByTheWaitTime() throws Exception {
		String key = key();
		Holder holder = new Holder(this.one, key, false);
		holder.start();
		try {
			long start = System.nanoTime();
			CompletableFuture<Integer> waiter = CompletableFuture
				.supplyAsync(() -> this.two.transactions.execute((status) -> {
					String setting = this.two.jdbc.queryForObject(lockWaitSettingSql(), String.class);
					assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> this.two.locks.lock(key))
						.withMessageContaining(key);
					assertThat(this.two.jdbc.queryForObject(lockWaitSettingSql(), String.class))
						.as("the lock wait setting after the wait ran out")
						.isEqualTo(setting);
					return this.two.jdbc.queryForObject("SELECT 1", Integer.class);
				}), this.threads);
			assertThat(waiter.get(60, TimeUnit.SECONDS)).isOne();
			// The default wait time is 5 s; the bound allows for a loaded machine.
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
		}
		finally {
			holder.finish();
		}
	}

	/**
	 * Outside a transaction the lock is refused, naming the key, and nothing is left
	 * locked.
	 */
	@Test
	void refusedOutsideATransaction() {
		String key = key();
		assertThatIllegalStateException().isThrownBy(() -> this.one.locks.lock(key))
			.withMessageContaining(key)
			.withMessageContaining("needs a transaction");
		this.two.transactions
			.executeWithoutResult((status) -> assertThat(this.two.locks.tryLock(key, Duration.ZERO)).isPresent());
	}

	/**
	 * Locking a key again in the same transaction returns at once with the same token; a
	 * new transaction started inside it (REQUIRES_NEW) is another transaction, and waits
	 * like any other.
	 */
	@Test
	void reentrantInOneTransaction() {
		String key = key();
		TransactionTemplate requiresNew = new TransactionTemplate(this.one.transactions.getTransactionManager());
		requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.one.transactions.executeWithoutResult((status) -> {
			long first = this.one.locks.lock(key, LONG);
			assertThat(this.one.locks.lock(key, LONG)).isEqualTo(first);
			assertThat(this.one.locks.tryLock(key, Duration.ZERO)).hasValue(first);
			requiresNew.executeWithoutResult(
					(inner) -> assertThat(this.one.locks.tryLock(key, Duration.ZERO)).as("in a new transaction")
						.isEmpty());
		});
	}

	/** One pool's transactions, JDBC access and transaction locks. */
	static final class Side {

		final JdbcTransactionLocks locks;

		final TransactionTemplate transactions;

		final JdbcTemplate jdbc;

		Side(HikariDataSource dataSource) {
			this.locks = new JdbcTransactionLocks(dataSource);
			this.transactions = new TransactionTemplate(new JdbcTransactionManager(dataSource));
			this.jdbc = new JdbcTemplate(dataSource);
		}

	}

	/** A transaction on its own thread that holds a key until told to finish. */
	final class Holder {

		private final Side side;

		private final String key;

		private final boolean rollback;

		private final CountDownLatch finish = new CountDownLatch(1);

		private final CompletableFuture<Long> token = new CompletableFuture<>();

		/** The id of the holder's session on the server. */
		private volatile long session;

		private CompletableFuture<Void> done;

		Holder(Side side, String key, boolean rollback) {
			this.side = side;
			this.key = key;
			this.rollback = rollback;
		}

		long start() throws Exception {
			this.done = CompletableFuture.runAsync(() -> this.side.transactions.executeWithoutResult((status) -> {
				try {
					long held = this.side.locks.lock(this.key, LONG);
					this.session = this.side.jdbc.queryForObject(sessionIdSql(), Long.class);
					this.token.complete(held);
					this.finish.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				catch (RuntimeException ex) {
					this.token.completeExceptionally(ex);
				}
				if (this.rollback) {
					status.setRollbackOnly();
				}
			}), AbstractJdbcTransactionLockTests.this.threads);
			return this.token.get(30, TimeUnit.SECONDS);
		}

		/** Lets a holder whose transaction cannot commit any more end. */
		void finishQuietly() {
			this.finish.countDown();
			try {
				this.done.get(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				// Its connection is gone: the commit fails, as it should.
			}
		}

		/** Ends the holder's transaction and waits until it has ended. */
		void finish() throws Exception {
			this.finish.countDown();
			this.done.get(30, TimeUnit.SECONDS);
		}

	}

}
