package dev.distlock.aop;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The lock advice must sit outside {@code @Transactional} on the same method, so that the
 * lock is still held when the transaction commits or rolls back.
 */
@Tag("server")
class TransactionOrderingTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port());

	@Test
	void lockIsHeldWhileTheTransactionCommitsAndRollsBack() {
		this.runner.withUserConfiguration(DefaultOrder.class).run((context) -> {
			Repository repository = context.getBean(Repository.class);
			RecordingTransactionManager transactions = context.getBean(RecordingTransactionManager.class);
			repository.save("tx-1");
			assertThatIllegalStateException().isThrownBy(() -> repository.fail("tx-2"));
			assertThat(transactions.lockHeldAtCompletion).containsExactly("commit:held", "rollback:held");
		});
	}

	@Test
	void aTransactionAdvisorOrderedOutsideTheLockFailsStartup() {
		this.runner.withUserConfiguration(TransactionOutside.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("would run inside the @Transactional advice (order 0)")
				.hasMessageContaining("distributed-lock.order");
		});
	}

	@Test
	void aLockOrderBelowTheTransactionOrderStarts() {
		this.runner.withUserConfiguration(TransactionOutside.class)
			.withPropertyValues("distributed-lock.order=-1")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				context.getBean(Repository.class).save("tx-4");
				assertThat(context.getBean(RecordingTransactionManager.class).lockHeldAtCompletion)
					.containsExactly("commit:held");
			});
	}

	static class Repository {

		@Transactional
		@DistributedLock(key = "#id")
		public void save(String id) {
		}

		@Transactional
		@DistributedLock(key = "#id")
		public void fail(String id) {
			throw new IllegalStateException("rolled back");
		}

	}

	/** Records, at commit and rollback, whether the thread still holds a lock. */
	static class RecordingTransactionManager extends AbstractPlatformTransactionManager {

		private static final long serialVersionUID = 1L;

		final transient List<String> lockHeldAtCompletion = new ArrayList<>();

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
			record("commit");
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
			record("rollback");
		}

		private void record(String phase) {
			Optional<Lease> lease = LockContext.current();
			this.lockHeldAtCompletion
				.add(phase + ":" + lease.map((held) -> held.isHeld() ? "held" : "released").orElse("none"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class DefaultOrder {

		@Bean
		Repository repository() {
			return new Repository();
		}

		@Bean
		PlatformTransactionManager transactionManager() {
			return new RecordingTransactionManager();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement(order = 0)
	static class TransactionOutside {

		@Bean
		Repository repository() {
			return new Repository();
		}

		@Bean
		PlatformTransactionManager transactionManager() {
			return new RecordingTransactionManager();
		}

	}

}
