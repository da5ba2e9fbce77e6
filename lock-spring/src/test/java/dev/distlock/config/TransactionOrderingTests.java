package dev.distlock.config;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.TransactionLock;
import dev.distlock.TransactionLocks;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The lock advice runs outside {@code @Transactional} on the same method, so the lock is
 * still held when the transaction completes, and the {@code @TransactionLock} advice
 * inside it; the transaction is a real one on a PostgreSQL server.
 */
@Tag("server")
class TransactionOrderingTests {

	private static final LockOptions NO_WAIT = LockOptions.builder().waitTime(Duration.ZERO).build();

	@Test
	void lockIsHeldUntilTheTransactionOnTheSameMethodHasCompleted() {
		ExecutorService otherThread = Executors.newSingleThreadExecutor();
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
				EnableDistributedLocksTests.Locks.class, Transactions.class, TransactionalJobs.class)) {
			TransactionalJobs jobs = context.getBean(TransactionalJobs.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			AtomicReference<Optional<Lease>> atCompletion = new AtomicReference<>();
			boolean inTransaction = jobs.run("7",
					() -> atCompletion
						.set(CompletableFuture.supplyAsync(() -> template.tryAcquire("tx:7", NO_WAIT), otherThread)
							.orTimeout(30, TimeUnit.SECONDS)
							.join()));
			assertThat(inTransaction).isTrue();
			assertThat(jobs.rows()).as("the transaction's row, committed").isEqualTo(1);
			assertThat(atCompletion.get()).as("another thread, after the commit").isEmpty();
		}
		finally {
			otherThread.shutdownNow();
		}
	}

	@Test
	void aTransactionLockIsTakenInsideTheTransactionOfItsMethodWhicheverIsDeclaredFirst() {
		for (List<Class<?>> order : List.of(List.of(Transactions.class, EnableDistributedLocksTests.Locks.class),
				List.of(EnableDistributedLocksTests.Locks.class, Transactions.class))) {
			try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
				order.forEach(context::register);
				context.register(RecordingTransactionLocks.class, OrderJobs.class);
				context.refresh();
				context.getBean(OrderJobs.class).ship("42");
				assertThat(context.getBean(RecordingTransactionLocks.class).keys).as("declared " + order)
					.containsExactly("order:42");
			}
		}
	}

	@Test
	void aTransactionLockWithoutTransactionLocksFailsTheCallNamingWhatIsMissing() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(Transactions.class,
				EnableDistributedLocksTests.Locks.class, OrderJobs.class)) {
			OrderJobs jobs = context.getBean(OrderJobs.class);
			assertThatIllegalStateException().isThrownBy(() -> jobs.ship("42"))
				.withMessageContaining("@TransactionLock needs a TransactionLocks bean");
			assertThat(jobs.shipped()).as("the method did not run").isEmpty();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class Transactions {

		@Bean(destroyMethod = "close")
		HikariDataSource dataSource() {
			return PostgresServer.shared().newDataSource();
		}

		@Bean
		PlatformTransactionManager transactionManager(HikariDataSource dataSource) {
			return new DataSourceTransactionManager(dataSource);
		}

	}

	/**
	 * Transaction locks that, as the real ones, refuse a caller outside a transaction.
	 */
	static class RecordingTransactionLocks implements TransactionLocks {

		final List<String> keys = new CopyOnWriteArrayList<>();

		@Override
		public long lock(String key) {
			if (!TransactionSynchronizationManager.isActualTransactionActive()) {
				throw new IllegalStateException("No transaction is active for lock '" + key + "'");
			}
			this.keys.add(key);
			return this.keys.size();
		}

		@Override
		public long lock(String key, Duration waitTime) {
			return lock(key);
		}

		@Override
		public OptionalLong tryLock(String key, Duration waitTime) {
			return OptionalLong.of(lock(key));
		}

	}

	static class OrderJobs {

		private final List<String> shipped = new CopyOnWriteArrayList<>();

		public List<String> shipped() {
			return this.shipped;
		}

		@Transactional
		@TransactionLock(key = "'order:' + #id")
		public void ship(String id) {
			this.shipped.add(id);
		}

	}

	static class TransactionalJobs {

		private final JdbcTemplate jdbc;

		TransactionalJobs(HikariDataSource dataSource) {
			this.jdbc = new JdbcTemplate(dataSource);
			this.jdbc.execute("CREATE TABLE IF NOT EXISTS tx_ordering (id VARCHAR(16) PRIMARY KEY)");
			this.jdbc.execute("DELETE FROM tx_ordering");
		}

		/**
		 * Writes a row and runs {@code afterCompletion} once the transaction has
		 * completed.
		 */
		@Transactional
		@DistributedLock(key = "'tx:' + #id")
		public boolean run(String id, Runnable afterCompletion) {
			this.jdbc.update("INSERT INTO tx_ordering (id) VALUES (?)", id);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCompletion(int status) {
					afterCompletion.run();
				}

			});
			return TransactionSynchronizationManager.isActualTransactionActive() && LockContext.current().isPresent();
		}

		int rows() {
			Integer rows = this.jdbc.queryForObject("SELECT count(*) FROM tx_ordering", Integer.class);
			return (rows != null) ? rows : 0;
		}

	}

}
