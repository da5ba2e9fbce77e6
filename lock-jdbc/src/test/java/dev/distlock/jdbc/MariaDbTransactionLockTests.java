package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.MariaDbServer;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Locks held by the caller's transaction on MariaDB: row locks on the key's row. */
class MariaDbTransactionLockTests extends AbstractJdbcTransactionLockTests {

	@Override
	HikariDataSource newDataSource() {
		return TestDatabases.mariadb();
	}

	/**
	 * The first lock on a key borrows a second connection to create the key's row: from a
	 * pool whose only connection is the caller's, the call fails within the default
	 * statement timeout, saying why, and the transaction is left to roll back.
	 */
	@Test
	void aNewKeyFailsWithinTheStatementTimeoutWhenThePoolHasNoConnectionFree() throws Exception {
		MariaDbServer server = MariaDbServer.shared();
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(server.jdbcUrl());
		config.setUsername(server.username());
		config.setPassword(server.password());
		config.setMaximumPoolSize(1);
		ExecutorService caller = Executors.newSingleThreadExecutor();
		try (HikariDataSource single = new HikariDataSource(config)) {
			JdbcTransactionLocks locks = new JdbcTransactionLocks(single);
			locks.createTableIfMissing();
			TransactionTemplate transactions = new TransactionTemplate(new JdbcTransactionManager(single));
			String key = "tx-new-" + UUID.randomUUID();
			CompletableFuture<Void> call = CompletableFuture
				.runAsync(() -> transactions.executeWithoutResult((status) -> locks.lock(key)), caller);
			// Well before the pool's own 30 seconds.
			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> call.get(20, TimeUnit.SECONDS))
				.havingCause()
				.isInstanceOf(LockBackendException.class)
				.withMessageContaining("No connection of the pool came within "
						+ JdbcLockProvider.DEFAULT_STORE_TIMEOUT.toSeconds() + "s")
				.withMessageContaining(key);
			Conditions.await("the late connection given back", Duration.ofSeconds(40),
					() -> single.getHikariPoolMXBean().getActiveConnections() == 0);
		}
		finally {
			caller.shutdownNow();
		}
	}

	@Override
	String waitingSql() {
		// The locking read of another connection still running on the server: InnoDB does
		// not always list a waiting transaction as a lock wait, so the statement itself
		// is looked for (after the driver's prefix that bounds its time).
		return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE id <> CONNECTION_ID()"
				+ " AND command = 'Query' AND info LIKE '%SELECT fence, %FOR UPDATE'";
	}

	@Override
	String lockWaitSettingSql() {
		return "SELECT CAST(@@SESSION.innodb_lock_wait_timeout AS CHAR)";
	}

	@Override
	String sessionIdSql() {
		return "SELECT CONNECTION_ID()";
	}

	@Override
	void killSession(JdbcTemplate admin, long id) {
		admin.execute("KILL " + id);
	}

}
