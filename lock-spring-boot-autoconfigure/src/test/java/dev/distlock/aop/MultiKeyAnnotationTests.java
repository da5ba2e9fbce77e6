package dev.distlock.aop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.OnFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.contract.TestThreads;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code @DistributedLock(keys = ...)}: every key held while the method runs, whether an
 * expression gives one key, a collection or an array; bad annotations fail at startup,
 * bad keys at the call, before the method runs.
 */
class MultiKeyAnnotationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class,
				DistributedLockAutoConfiguration.class))
		.withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.wait-time=0");

	@Test
	void everyKeyOfEveryExpressionIsHeldWhileTheMethodRuns() {
		this.runner.withBean(Transfers.class).run((context) -> {
			Transfers transfers = context.getBean(Transfers.class);
			LockTemplate locks = context.getBean(LockTemplate.class);
			List<String> held = transfers.transfer("b", "a", List.of("x", "a"), new String[] { "y" }, () -> {
				for (String key : List.of("a", "b", "x", "y")) {
					assertThat(elsewhere(() -> locks.tryAcquire(key, LockOptions.defaults()).map((lease) -> {
						lease.release();
						return true;
					}).orElse(false))).as("%s is free for another thread", key).isFalse();
				}
			});
			assertThat(held).containsExactly("a", "b", "x", "y");
			for (String key : List.of("a", "b", "x", "y")) {
				locks.tryAcquire(key, LockOptions.defaults()).orElseThrow().release();
			}
		});
	}

	@Test
	void skipDoesNotRunTheMethodWhenAKeyIsBusy() {
		this.runner.withBean(Transfers.class).run((context) -> {
			Transfers transfers = context.getBean(Transfers.class);
			try (Lease busy = elsewhere(
					() -> context.getBean(LockTemplate.class).acquire("to", LockOptions.defaults()))) {
				transfers.skipping("from", "to");
				assertThat(transfers.skippedRuns()).isZero();
			}
			transfers.skipping("from", "to");
			assertThat(transfers.skippedRuns()).isOne();
		});
	}

	@Test
	void aBadKeyFailsTheCallBeforeTheMethodRuns() {
		this.runner.withBean(Transfers.class).run((context) -> {
			Transfers transfers = context.getBean(Transfers.class);
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> transfers.transfer("a", "b", Arrays.asList("c", null), new String[0], () -> {
				}))
				.withMessageContaining("#more")
				.withMessageContaining("null")
				.withMessageContaining("the method was not invoked");
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> transfers.transfer("a", "b", List.of(), new String[] { "c" }, () -> {
				}))
				.withMessageContaining("evaluated to an empty");
			assertThat(transfers.runs()).isZero();
		});
	}

	@Test
	void keyAndKeysTogetherFailAtStartup() {
		assertFails(Both.class, "Both.work", "sets both key and keys");
	}

	@Test
	void neitherKeyNorKeysFailsAtStartup() {
		assertFails(Neither.class, "Neither.work", "has an empty key");
	}

	@Test
	void aFairMultiKeyLockFailsAtStartup() {
		assertFails(Fair.class, "Fair.work", "cannot be fair");
	}

	@Test
	void keysOnAStoreWithoutMultiKeyLocksFailAtStartup() {
		InMemoryLockProvider store = new InMemoryLockProvider();
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
			.withBean(LockProvider.class, () -> store::tryLock)
			.withBean(Transfers.class)
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).isInstanceOf(LockDeclarationException.class)
					.hasMessageContaining("Transfers.transfer")
					.hasMessageContaining("does not offer the lock kind MULTI");
			});
	}

	private void assertFails(Class<?> bean, String method, String reason) {
		this.runner.withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(LockDeclarationException.class)
				.hasMessageContaining(method)
				.hasMessageContaining(reason);
		});
	}

	private static <T> T elsewhere(java.util.function.Supplier<T> call) {
		try {
			return CompletableFuture.supplyAsync(call, TestThreads.EACH).get(10, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	static class Transfers {

		final AtomicInteger runs = new AtomicInteger();

		final AtomicInteger skippedRuns = new AtomicInteger();

		/** Read through the proxy: its own fields are not the target's. */
		public int runs() {
			return this.runs.get();
		}

		public int skippedRuns() {
			return this.skippedRuns.get();
		}

		@DistributedLock(keys = { "#from", "#to", "#more", "#extra" })
		public List<String> transfer(String from, String to, Collection<String> more, String[] extra, Runnable inside) {
			this.runs.incrementAndGet();
			inside.run();
			return new ArrayList<>(((MultiLease) LockContext.current().orElseThrow()).keys());
		}

		@DistributedLock(keys = { "#from", "#to" }, onFailure = OnFailure.SKIP)
		public void skipping(String from, String to) {
			this.skippedRuns.incrementAndGet();
		}

	}

	static class Both {

		@DistributedLock(key = "#id", keys = "#id")
		public void work(String id) {
		}

	}

	static class Neither {

		@DistributedLock
		public void work(String id) {
		}

	}

	static class Fair {

		@DistributedLock(keys = { "#a", "#b" }, fair = true)
		public void work(String a, String b) {
		}

	}

}
