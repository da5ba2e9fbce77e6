package dev.distlock.aop;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.OnFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

@Tag("server")
class DistributedLockAnnotationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"distributed-lock.wait-time=0", "distributed-lock.locks.quick.wait-time=0",
				"distributed-lock.locks.quick.lease-time=5s", "sample.wait=0")
		.withUserConfiguration(Services.class);

	@Test
	void keyFromParameterName() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.byName("A-1")).isEqualTo("a:A-1");
		});
	}

	@Test
	void keysFromIndexRootAndBeanReference() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.byIndex("X")).isEqualTo("p:X");
			assertThat(orders.byRoot()).isEqualTo("root:byRoot");
			assertThat(orders.byBean("B")).isEqualTo("bean:tenant-7:B");
		});
	}

	@Test
	void theMethodRunsHoldingTheLockAndOthersAreKeptOut() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			String seenFromOtherThread = orders.whileHeld("held-1", () -> onOtherThread(
					() -> template.tryAcquire("held-1", LockOptions.defaults()).isPresent() ? "acquired" : "kept out"));
			assertThat(seenFromOtherThread).isEqualTo("kept out");
			assertThat(onOtherThread(() -> release(template.tryAcquire("held-1", LockOptions.defaults()))))
				.as("released after the method")
				.isTrue();
		});
	}

	@Test
	void lockContextExposesTheLeaseOnlyInside() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			Lease inside = orders.whileHeld("ctx-1", () -> LockContext.current().orElseThrow());
			assertThat(inside.key()).isEqualTo("ctx-1");
			assertThat(inside.fencingToken()).isPositive();
			assertThat(inside.isHeld()).as("released after the method").isFalse();
			assertThat(LockContext.current()).isEmpty();
		});
	}

	@Test
	void theMethodsExceptionPropagatesUnchangedAndTheLockIsReleased() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			IllegalStateException thrown = new IllegalStateException("boom");
			assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> orders.whileHeld("ex-1", () -> {
				throw thrown;
			})).isSameAs(thrown).satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
			LockTemplate template = context.getBean(LockTemplate.class);
			assertThat(onOtherThread(() -> release(template.tryAcquire("ex-1", LockOptions.defaults())))).isTrue();
		});
	}

	@Test
	void nullKeyIsRejectedAndTheMethodIsNotInvoked() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThatIllegalArgumentException().isThrownBy(() -> orders.plain(null))
				.withMessageContaining("#orderId")
				.withMessageContaining("Orders.plain")
				.withMessageContaining("null");
			assertThatIllegalArgumentException().isThrownBy(() -> orders.plain("  ")).withMessageContaining("blank");
			assertThat(orders.invocations()).isEmpty();
		});
	}

	@Test
	void typeReferencesInKeysAreRefused() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThatIllegalArgumentException().isThrownBy(orders::typeReference)
				.withMessageContaining("type references");
			assertThat(orders.invocations()).isEmpty();
		});
	}

	@Test
	void whenHeldElsewhereThrowIsTheDefaultAndTheMethodIsNotInvoked() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			holdElsewhere(template, "a:busy-1",
					() -> assertThatExceptionOfType(LockAcquisitionException.class)
						.isThrownBy(() -> orders.byName("busy-1"))
						.withMessageContaining("a:busy-1"));
			assertThat(orders.invocations()).isEmpty();
		});
	}

	@Test
	void skipReturnsNothingAndDoesNotInvoke() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			holdElsewhere(template, "nightly", () -> {
				orders.nightly();
				assertThat(orders.optionalNightly()).isEmpty();
			});
			assertThat(orders.invocations()).isEmpty();
			orders.nightly();
			assertThat(orders.optionalNightly()).contains("ran");
			assertThat(orders.invocations()).containsExactly("nightly", "optionalNightly");
		});
	}

	@Test
	void nestedCallsOnTheSameKeyAreReentrant() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			Outer outer = context.getBean(Outer.class);
			long[] tokens = outer.callsInner(orders, "re-1");
			assertThat(tokens[0]).isEqualTo(tokens[1]);
		});
	}

	@Test
	void metaAnnotationsWork() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			assertThat(orders.meta()).isEqualTo("meta-key");
		});
	}

	@Test
	void namedOptionsApply() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			holdElsewhere(template, "named-1",
					() -> assertThatExceptionOfType(LockAcquisitionException.class)
						.isThrownBy(() -> orders.named("named-1"))
						.satisfies((ex) -> assertThat(ex.getWaitTime()).isZero()));
		});
	}

	@Test
	void fairOnTheAnnotationQueuesTheCallerInRedis() {
		this.runner.run((context) -> {
			Orders orders = context.getBean(Orders.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
			String id = UUID.randomUUID().toString();
			holdElsewhere(template, "fair-" + id, () -> {
				CompletableFuture<Void> call = CompletableFuture.runAsync(() -> orders.fair(id), TestThreads.EACH);
				Conditions.await("the annotated call queued", Duration.ofSeconds(10),
						() -> !redis.keys("*fair-" + id + ":queue").isEmpty());
				assertThat(call).isNotDone();
			});
			Conditions.await("the annotated call ran", Duration.ofSeconds(10),
					() -> orders.invocations().contains("fair"));
			// The method records its run before the advice releases the lock.
			Conditions.await("the lock and its queue are gone", Duration.ofSeconds(10),
					() -> redis.keys("*fair-" + id + "*").isEmpty());
		});
	}

	private static boolean release(Optional<Lease> lease) {
		lease.ifPresent(Lease::release);
		return lease.isPresent();
	}

	/** Holds {@code key} on another thread while {@code body} runs here. */
	static void holdElsewhere(LockTemplate template, String key, Runnable body) throws Exception {
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Lease lease = executor.submit(() -> template.acquire(key, LockOptions.defaults()))
				.get(30, TimeUnit.SECONDS);
			try {
				body.run();
			}
			finally {
				executor.submit(lease::release).get(30, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	static <T> T onOtherThread(Supplier<T> call) {
		return CompletableFuture.supplyAsync(call, TestThreads.EACH).orTimeout(30, TimeUnit.SECONDS).join();
	}

	@Target(ElementType.METHOD)
	@Retention(RetentionPolicy.RUNTIME)
	@DistributedLock(key = "'meta-key'", onFailure = OnFailure.THROW)
	@interface MetaLocked {

	}

	static class Orders {

		private final List<String> invocations = new ArrayList<>();

		List<String> invocations() {
			return this.invocations;
		}

		@DistributedLock(key = "#orderId")
		public String plain(String orderId) {
			this.invocations.add("plain");
			return orderId;
		}

		@DistributedLock(key = "'a:' + #orderId")
		public String byName(String orderId) {
			this.invocations.add("byName");
			return LockContext.current().orElseThrow().key();
		}

		@DistributedLock(key = "'p:' + #p0")
		public String byIndex(String value) {
			return LockContext.current().orElseThrow().key();
		}

		@DistributedLock(key = "'root:' + #root.methodName")
		public String byRoot() {
			return LockContext.current().orElseThrow().key();
		}

		@DistributedLock(key = "'bean:' + @tenant.id() + ':' + #value")
		public String byBean(String value) {
			return LockContext.current().orElseThrow().key();
		}

		@DistributedLock(key = "T(java.lang.Runtime).getRuntime().toString()")
		public String typeReference() {
			this.invocations.add("typeReference");
			return "ran";
		}

		@DistributedLock(key = "#key", waitTime = "${sample.wait}")
		public <T> T whileHeld(String key, Supplier<T> body) {
			return body.get();
		}

		@DistributedLock(key = "'nightly'", onFailure = OnFailure.SKIP)
		public void nightly() {
			this.invocations.add("nightly");
		}

		@DistributedLock(key = "'nightly'", onFailure = OnFailure.SKIP)
		public Optional<String> optionalNightly() {
			this.invocations.add("optionalNightly");
			return Optional.of("ran");
		}

		@DistributedLock(key = "#key", name = "quick")
		public void named(String key) {
			this.invocations.add("named");
		}

		@DistributedLock(key = "'fair-' + #id", waitTime = "5s", fair = true)
		public void fair(String id) {
			this.invocations.add("fair");
		}

		@MetaLocked
		public String meta() {
			return LockContext.current().orElseThrow().key();
		}

	}

	static class Outer {

		@DistributedLock(key = "#key")
		public long[] callsInner(Orders orders, String key) {
			long outerToken = LockContext.current().orElseThrow().fencingToken();
			long innerToken = orders.whileHeld(key, () -> LockContext.current().orElseThrow().fencingToken());
			return new long[] { outerToken, innerToken };
		}

	}

	static class Tenant {

		public String id() {
			return "tenant-7";
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Services {

		@Bean
		Orders orders() {
			return new Orders();
		}

		@Bean
		Outer outer() {
			return new Outer();
		}

		@Bean
		Tenant tenant() {
			return new Tenant();
		}

	}

}
