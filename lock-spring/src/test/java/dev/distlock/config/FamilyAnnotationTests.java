package dev.distlock.config;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import dev.distlock.DistributedLock;
import dev.distlock.LockContext;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.aop.LockDeclarationException;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Test;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code mode} and {@code permits} on the annotation: read locks and semaphores on a
 * store that has them, and startup failures naming the store and what it lacks, or the
 * attribute that is wrong.
 */
class FamilyAnnotationTests {

	/**
	 * A thread per task: the common pool may run one task at a time (JDK 25, two cores).
	 */
	private static final Executor THREAD_PER_TASK = (task) -> {
		Thread thread = new Thread(task);
		thread.setDaemon(true);
		thread.start();
	};

	@Test
	void readersShareTheKeyThroughTheAnnotation() throws Exception {
		try (AnnotationConfigApplicationContext context = start(InMemoryStore.class, Readers.class)) {
			Readers readers = context.getBean(Readers.class);
			CountDownLatch bothIn = new CountDownLatch(2);
			CompletableFuture<Void> first = CompletableFuture.runAsync(() -> readers.read(bothIn), THREAD_PER_TASK);
			CompletableFuture<Void> second = CompletableFuture.runAsync(() -> readers.read(bothIn), THREAD_PER_TASK);
			CompletableFuture.allOf(first, second).get(30, TimeUnit.SECONDS);
		}
	}

	@Test
	void aSemaphoreAdmitsItsPermitsThroughTheAnnotation() throws Exception {
		try (AnnotationConfigApplicationContext context = start(InMemoryStore.class, Exports.class)) {
			Exports exports = context.getBean(Exports.class);
			CountDownLatch twoIn = new CountDownLatch(2);
			CompletableFuture<Void> first = CompletableFuture.runAsync(() -> exports.export(twoIn), THREAD_PER_TASK);
			CompletableFuture<Void> second = CompletableFuture.runAsync(() -> exports.export(twoIn), THREAD_PER_TASK);
			CompletableFuture.allOf(first, second).get(30, TimeUnit.SECONDS);
			DefaultLockTemplate template = context.getBean(DefaultLockTemplate.class);
			assertThat(template.heldLocks()).isZero();
		}
	}

	@Test
	void aReadLockOnAStoreWithoutReadLocksFailsStartup() {
		assertRefreshFails(MapStore.class, Readers.class, "Read locks need a store that offers them", "map store",
				"lock kind SHARED", Readers.class.getName() + ".read()");
	}

	@Test
	void aSemaphoreOnAStoreWithoutSemaphoresFailsStartup() {
		assertRefreshFails(MapStore.class, Exports.class, "Semaphores (permits) need a store that offers them",
				"map store", "lock kind PERMITS");
	}

	@Test
	void negativePermitsFailStartup() {
		assertRefreshFails(InMemoryStore.class, NegativePermits.class, "permits = \"-1\"", "must be zero");
	}

	@Test
	void permitsWithModeReadFailStartup() {
		assertRefreshFails(InMemoryStore.class, ReadSemaphore.class, "permits = \"3\"", "mode = READ");
	}

	@Test
	void aFairSemaphoreFailsStartup() {
		assertRefreshFails(InMemoryStore.class, FairSemaphore.class, "Fair semaphores are not offered");
	}

	@Test
	void theTemplateRefusesAReadLockOnAStoreWithoutThemNamingTheStore() {
		try (RenewalScheduler scheduler = new RenewalScheduler();
				DefaultLockTemplate template = new DefaultLockTemplate(new MapLockProvider(), scheduler, defaults())) {
			Throwable failure = catchThrowable(
					() -> template.run("k", LockOptions.builder().mode(LockMode.READ).build(), () -> {
					}));
			assertThat(failure).isInstanceOf(UnsupportedOperationException.class)
				.hasMessageContaining("map store")
				.hasMessageContaining("lock kind SHARED");
		}
	}

	private static void assertRefreshFails(Class<?> store, Class<?> bean, String... messageParts) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.register(store, bean);
		Throwable failure = catchThrowable(context::refresh);
		// Reported as it is, once every bean exists, not wrapped by the proxy's creation.
		assertThat(failure).isInstanceOf(LockDeclarationException.class);
		while (failure != null && !(failure instanceof IllegalStateException)) {
			failure = failure.getCause();
		}
		assertThat(failure).as("the cause that names the problem").isNotNull();
		assertThat(failure.getMessage()).contains(messageParts);
	}

	private static AnnotationConfigApplicationContext start(Class<?>... classes) {
		return new AnnotationConfigApplicationContext(classes);
	}

	private static LockOptions defaults() {
		return LockOptions.builder()
			.waitTime(Duration.ofSeconds(20))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
	}

	private static void awaitOthers(CountDownLatch latch) {
		latch.countDown();
		try {
			assertThat(latch.await(20, TimeUnit.SECONDS)).as("the other holder is inside too").isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	abstract static class Store {

		private final RenewalScheduler scheduler = new RenewalScheduler();

		abstract LockProvider provider();

		@Bean
		LockProvider lockProvider() {
			return provider();
		}

		@Bean(destroyMethod = "close")
		RenewalScheduler renewalScheduler() {
			return this.scheduler;
		}

		@Bean
		DefaultLockTemplate lockTemplate(LockProvider lockProvider) {
			return new DefaultLockTemplate(lockProvider, this.scheduler, defaults());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class InMemoryStore extends Store {

		@Override
		LockProvider provider() {
			return new InMemoryLockProvider();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class MapStore extends Store {

		@Override
		LockProvider provider() {
			return new MapLockProvider();
		}

	}

	static class Readers {

		@DistributedLock(key = "'catalog'", mode = LockMode.READ)
		public void read(CountDownLatch bothIn) {
			assertThat(LockContext.current()).isPresent();
			awaitOthers(bothIn);
		}

	}

	static class Exports {

		@DistributedLock(key = "'exports'", permits = 2)
		public void export(CountDownLatch twoIn) {
			awaitOthers(twoIn);
		}

	}

	static class NegativePermits {

		@DistributedLock(key = "'k'", permits = -1)
		public void run() {
		}

	}

	static class ReadSemaphore {

		@DistributedLock(key = "'k'", permits = 3, mode = LockMode.READ)
		public void run() {
		}

	}

	static class FairSemaphore {

		@DistributedLock(key = "'k'", permits = 3, fair = true)
		public void run() {
		}

	}

}
