package dev.distlock.aop;

import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.LockAcquisitionException;
import dev.distlock.TransactionLock;
import dev.distlock.TransactionLocks;
import dev.distlock.autoconfigure.jdbc.DistributedLockJdbcTransactionAutoConfiguration;
import dev.distlock.config.EnableDistributedLocks;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@code @TransactionLock} with {@code @Transactional} on the same method, in a Spring
 * Boot context on PostgreSQL: the lock is taken inside the method's transaction and held
 * until it commits; without a transaction the method is not invoked.
 */
@Tag("server")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionLockAnnotationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
				DataSourceTransactionManagerAutoConfiguration.class, TransactionAutoConfiguration.class,
				DistributedLockJdbcTransactionAutoConfiguration.class))
		.withPropertyValues("spring.datasource.url=" + PostgresServer.shared().jdbcUrl(),
				"spring.datasource.username=" + PostgresServer.shared().username(),
				"spring.datasource.password=" + PostgresServer.shared().password(),
				"distributed-lock.jdbc.initialize-schema=always",
				"distributed-lock.jdbc.table-name=annotation_"
						+ UUID.randomUUID().toString().replace("-", "").substring(0, 12))
		.withUserConfiguration(Config.class);

	@Test
	void locksInsideTheMethodsTransactionUntilItCommits() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			Accounts accounts = context.getBean(Accounts.class);
			String id = "account-" + UUID.randomUUID();
			CountDownLatch entered = new CountDownLatch(1);
			CountDownLatch finish = new CountDownLatch(1);
			ExecutorService thread = Executors.newSingleThreadExecutor();
			CompletableFuture<Long> holder = CompletableFuture.supplyAsync(() -> accounts.hold(id, entered, finish),
					thread);
			assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> accounts.tryNow(id))
				.withMessageContaining(id);
			assertThat(accounts.tries()).as("calls that ran while the lock was held").isZero();
			finish.countDown();
			long held = holder.get(30, TimeUnit.SECONDS);
			thread.shutdown();
			assertThat(accounts.tryNow(id)).as("the token after the commit").isGreaterThan(held);
			assertThat(accounts.tries()).isOne();
		});
	}

	@Test
	void refusesACallWithoutATransaction() {
		this.runner.run((context) -> {
			Accounts accounts = context.getBean(Accounts.class);
			String id = "account-" + UUID.randomUUID();
			assertThatIllegalStateException().isThrownBy(() -> accounts.withoutTransaction(id))
				.withMessageContaining(id)
				.withMessageContaining("needs a transaction");
			assertThat(accounts.tries()).as("calls that ran").isZero();
		});
	}

	/**
	 * A Boot application that also declares {@code @EnableDistributedLocks} gets one
	 * advisor, the auto-configuration's, still inside the transaction.
	 */
	@Test
	void theAnnotationBesideTheAutoConfigurationAddsNoSecondAdvisor() {
		String table = "annotation_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(EnabledByHand.class)
			.web(WebApplicationType.NONE)
			.properties("spring.datasource.url=" + PostgresServer.shared().jdbcUrl(),
					"spring.datasource.username=" + PostgresServer.shared().username(),
					"spring.datasource.password=" + PostgresServer.shared().password(),
					"distributed-lock.jdbc.initialize-schema=always", "distributed-lock.jdbc.table-name=" + table)
			.run()) {
			assertThat(context.getBeansOfType(TransactionLockAdvisor.class)).hasSize(1);
			Accounts accounts = context.getBean(Accounts.class);
			assertThat(accounts.tryNow("account-" + UUID.randomUUID())).isPositive();
			assertThat(accounts.tries()).isOne();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@ImportAutoConfiguration({ DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
			TransactionAutoConfiguration.class, DistributedLockJdbcTransactionAutoConfiguration.class })
	@Import(Config.class)
	static class EnabledByHand {

	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

		@Bean
		Accounts accounts(TransactionLocks locks) {
			return new Accounts(locks);
		}

	}

	static class Accounts {

		private final TransactionLocks locks;

		private final AtomicInteger tries = new AtomicInteger();

		Accounts(TransactionLocks locks) {
			this.locks = locks;
		}

		/** Calls of the methods that count, read through the proxy. */
		public int tries() {
			return this.tries.get();
		}

		/** Holds the lock until {@code finish}; returns its token. */
		@Transactional
		@TransactionLock(key = "#id")
		public long hold(String id, CountDownLatch entered, CountDownLatch finish) {
			assertThat(TransactionSynchronizationManager.isActualTransactionActive()).isTrue();
			// Held by this transaction already: re-entry returns its token.
			long token = this.locks.lock(id);
			entered.countDown();
			try {
				finish.await(60, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return token;
		}

		@Transactional
		@TransactionLock(key = "#id", waitTime = "0")
		public long tryNow(String id) {
			this.tries.incrementAndGet();
			return this.locks.lock(id);
		}

		@TransactionLock(key = "#id")
		public void withoutTransaction(String id) {
			this.tries.incrementAndGet();
		}

	}

}
