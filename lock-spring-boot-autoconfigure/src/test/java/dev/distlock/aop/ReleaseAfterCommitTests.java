package dev.distlock.aop;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockTemplate;
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
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * A lock taken inside an outer transaction stays held, and renewed, until that
 * transaction completes, so the next holder never reads what this one has not committed.
 * The transaction manager records, at the moment of commit or rollback, whether the lock
 * key still exists in Redis. A control with
 * {@code distributed-lock.release-after-commit=false} shows the lock gone before the
 * commit.
 */
@Tag("server")
class ReleaseAfterCommitTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port())
		.withUserConfiguration(Config.class);

	@Test
	void anAnnotatedCallInsideAnOuterTransactionKeepsTheLockUntilTheCommit() {
		this.runner.run((context) -> {
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Service service = context.getBean(Service.class);
			KeyRecordingTransactionManager transactions = context.getBean(KeyRecordingTransactionManager.class);
			transactions.watch("lock:rac-1");
			outer.executeWithoutResult((status) -> {
				service.update("rac-1");
				assertThat(transactions.keyExists()).as("after the locked call returned, before commit").isTrue();
			});
			assertThat(transactions.seen).containsExactly("commit:locked");
			assertThat(transactions.keyExists()).as("after the transaction").isFalse();
		});
	}

	@Test
	void theTemplateInsideAnOuterTransactionKeepsTheLockUntilTheRollback() {
		this.runner.run((context) -> {
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			LockTemplate template = context.getBean(LockTemplate.class);
			KeyRecordingTransactionManager transactions = context.getBean(KeyRecordingTransactionManager.class);
			transactions.watch("lock:rac-2");
			outer.executeWithoutResult((status) -> {
				template.run("rac-2", () -> {
				});
				status.setRollbackOnly();
			});
			assertThat(transactions.seen).containsExactly("rollback:locked");
			assertThat(transactions.keyExists()).isFalse();
		});
	}

	@Test
	void withReleaseAfterCommitOffTheLockIsGoneBeforeTheCommit() {
		this.runner.withPropertyValues("distributed-lock.release-after-commit=false").run((context) -> {
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Service service = context.getBean(Service.class);
			KeyRecordingTransactionManager transactions = context.getBean(KeyRecordingTransactionManager.class);
			transactions.watch("lock:rac-3");
			outer.executeWithoutResult((status) -> service.update("rac-3"));
			assertThat(transactions.seen).containsExactly("commit:free");
		});
	}

	@Test
	void theDeferredLockIsRenewedUntilTheTransactionCompletes() {
		// A lease long enough that a renewal delayed by a busy machine still lands in
		// time; what is tested is that renewal goes on past the call.
		this.runner.withPropertyValues("distributed-lock.lease-time=1s").run((context) -> {
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Service service = context.getBean(Service.class);
			KeyRecordingTransactionManager transactions = context.getBean(KeyRecordingTransactionManager.class);
			transactions.watch("lock:rac-4");
			outer.executeWithoutResult((status) -> {
				Lease lease = service.update("rac-4");
				long end = System.nanoTime() + Duration.ofMillis(3500).toNanos();
				while (System.nanoTime() < end) {
					assertThat(lease.isHeld()).as("three lease periods after the call, still in the transaction")
						.isTrue();
					LockSupport.parkNanos(30_000_000);
				}
			});
			assertThat(transactions.seen).containsExactly("commit:locked");
			assertThat(transactions.keyExists()).isFalse();
		});
	}

	@Test
	void aLeaseLostAfterTheCallButBeforeTheCommitRollsTheTransactionBack() {
		this.runner.withPropertyValues("distributed-lock.lease-time=300ms").run((context) -> {
			TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
			Service service = context.getBean(Service.class);
			StringRedisTemplate redis = context.getBean(StringRedisTemplate.class);
			KeyRecordingTransactionManager transactions = context.getBean(KeyRecordingTransactionManager.class);
			transactions.watch("lock:rac-5");
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(() -> outer.executeWithoutResult((s) -> {
				Lease lease = service.update("rac-5");
				redis.delete("lock:rac-5");
				await(() -> !lease.isHeld());
			})).withMessageContaining("before the transaction committed");
			assertThat(transactions.seen).containsExactly("rollback:free");
		});
	}

	private static void await(java.util.function.BooleanSupplier condition) {
		long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("condition not met within 5s");
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

	static class Service {

		@DistributedLock(key = "#id")
		public Lease update(String id) {
			return LockContext.current().orElseThrow();
		}

	}

	/** Records, at commit and rollback, whether the watched lock key exists in Redis. */
	static class KeyRecordingTransactionManager extends AbstractPlatformTransactionManager {

		private static final long serialVersionUID = 1L;

		final transient List<String> seen = new CopyOnWriteArrayList<>();

		private final transient StringRedisTemplate redis;

		private final transient AtomicReference<String> key = new AtomicReference<>();

		KeyRecordingTransactionManager(StringRedisTemplate redis) {
			this.redis = redis;
		}

		void watch(String key) {
			this.key.set(key);
		}

		boolean keyExists() {
			return Boolean.TRUE.equals(this.redis.hasKey(this.key.get()));
		}

		@Override
		protected Object doGetTransaction() {
			return new Object();
		}

		@Override
		protected void doBegin(Object transaction, TransactionDefinition definition) {
		}

		@Override
		protected void doCommit(DefaultTransactionStatus status) {
			this.seen.add("commit:" + (keyExists() ? "locked" : "free"));
		}

		@Override
		protected void doRollback(DefaultTransactionStatus status) {
			this.seen.add("rollback:" + (keyExists() ? "locked" : "free"));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableTransactionManagement
	static class Config {

		@Bean
		Service service() {
			return new Service();
		}

		@Bean
		KeyRecordingTransactionManager transactionManager(StringRedisTemplate redis) {
			return new KeyRecordingTransactionManager(redis);
		}

	}

}
