package dev.distlock.config;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.aop.LockDeclarationException;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link EnableDistributedLocks} in a plain Spring application context, no Spring Boot,
 * over a real (in-process) store.
 */
class EnableDistributedLocksTests {

	private static final LockOptions NO_WAIT = LockOptions.builder().waitTime(Duration.ZERO).build();

	private final ExecutorService otherThread = Executors.newSingleThreadExecutor();

	@AfterEach
	void stopOtherThread() {
		this.otherThread.shutdownNow();
	}

	@Test
	void annotatedMethodRunsHoldingTheLock() {
		try (AnnotationConfigApplicationContext context = start(Locks.class, Jobs.class)) {
			Jobs jobs = context.getBean(Jobs.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			LockTemplate otherInstance = context.getBean(Store.class).otherInstance();
			assertThat(AopUtils.isAopProxy(jobs)).isTrue();
			AtomicReference<Optional<Lease>> otherThread = new AtomicReference<>();
			AtomicReference<Optional<Lease>> otherTemplate = new AtomicReference<>();
			Optional<Lease> current = jobs.run("42", () -> {
				otherThread.set(onOtherThread(() -> template.tryAcquire("job:42", NO_WAIT)));
				otherTemplate.set(otherInstance.tryAcquire("job:42", NO_WAIT));
				return LockContext.current();
			});
			assertThat(current).hasValueSatisfying((lease) -> {
				assertThat(lease.key()).isEqualTo("job:42");
				assertThat(lease.isHeld()).as("held while the method ran, released since").isFalse();
			});
			assertThat(otherThread.get()).as("another thread, while the method ran").isEmpty();
			assertThat(otherTemplate.get()).as("another template on the same store, while the method ran").isEmpty();
			assertThat(LockContext.current()).isEmpty();
			Optional<Lease> after = onOtherThread(() -> template.tryAcquire("job:42", NO_WAIT));
			assertThat(after).as("free once the method returned").isPresent();
			after.get().release();
		}
	}

	@Test
	void advisorTakesTheAutoConfigurationsDefaultOrder() {
		try (AnnotationConfigApplicationContext context = start(Locks.class)) {
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(2147483547);
		}
	}

	@Test
	void advisorTakesTheAnnotationsOrder() {
		try (AnnotationConfigApplicationContext context = start(OrderedLocks.class)) {
			assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(42);
		}
	}

	@Test
	void typeReferencesInKeysAreRefusedByDefault() {
		try (AnnotationConfigApplicationContext context = start(Locks.class, TypeReferenceJobs.class)) {
			AtomicBoolean invoked = new AtomicBoolean();
			assertThatIllegalArgumentException()
				.isThrownBy(() -> context.getBean(TypeReferenceJobs.class).run(() -> invoked.set(true)))
				.withMessageContaining("T(java.lang.Math)");
			assertThat(invoked).isFalse();
		}
	}

	@Test
	void typeReferencesInKeysAreAllowedWhenTheAnnotationSaysSo() {
		try (AnnotationConfigApplicationContext context = start(TypeReferenceLocks.class, TypeReferenceJobs.class)) {
			AtomicBoolean invoked = new AtomicBoolean();
			context.getBean(TypeReferenceJobs.class).run(() -> invoked.set(true));
			assertThat(invoked).isTrue();
		}
	}

	@Test
	void keyNamingNoParameterFailsTheRefresh() {
		assertRefreshFails(UnknownVariable.class, "#orderId", "which is not a parameter of the method",
				UnknownVariable.class.getName() + ".run()");
	}

	@Test
	void keyThatDoesNotParseFailsTheRefresh() {
		assertRefreshFails(Unparsable.class, "is not a valid SpEL expression", Unparsable.class.getName() + ".run()");
	}

	@Test
	void namedOptionsFailTheRefresh() {
		assertRefreshFails(Named.class, "name = \"stock\"", "only the Spring Boot auto-configuration");
	}

	@Test
	void fairLockOnAStoreWithoutFairLocksFailsTheRefresh() {
		assertRefreshFails(Fair.class, "Fair locks need a store that queues waiters", "map store");
	}

	@Test
	void withoutALockTemplateTheContextStartsAndALockedCallFailsClosed() {
		try (AnnotationConfigApplicationContext context = start(NoTemplate.class, Jobs.class)) {
			AtomicBoolean invoked = new AtomicBoolean();
			assertThatIllegalStateException().isThrownBy(() -> context.getBean(Jobs.class).run("1", () -> {
				invoked.set(true);
				return Optional.empty();
			})).withMessageContaining("needs a LockTemplate bean");
			assertThat(invoked).isFalse();
		}
	}

	private void assertRefreshFails(Class<?> bean, String... messageParts) {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		context.register(Locks.class, bean);
		Throwable failure = catchThrowable(context::refresh);
		// Reported as it is, once every bean exists, not wrapped by the proxy's creation.
		assertThat(failure).isInstanceOf(LockDeclarationException.class);
		while (failure != null && !(failure instanceof IllegalStateException)) {
			failure = failure.getCause();
		}
		assertThat(failure).as("the cause that names the problem").isNotNull();
		assertThat(failure.getMessage()).contains(messageParts);
		assertThat(context.isActive()).isFalse();
	}

	private static AnnotationConfigApplicationContext start(Class<?>... classes) {
		return new AnnotationConfigApplicationContext(classes);
	}

	private <T> T onOtherThread(Supplier<T> action) {
		try {
			return this.otherThread.submit(action::get).get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static LockOptions defaults() {
		return LockOptions.builder()
			.waitTime(Duration.ZERO)
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20))
			.build();
	}

	/**
	 * What a user writes: the annotation and a template over a store.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	@Import(Store.class)
	static class Locks {

	}

	/**
	 * A template over a store. Release after commit is off, so only the advisor's order
	 * keeps a lock over a commit.
	 */
	@Configuration(proxyBeanMethods = false)
	static class Store {

		private final MapLockProvider store = new MapLockProvider();

		private final RenewalScheduler scheduler = new RenewalScheduler();

		@Bean
		MapLockProvider lockProvider() {
			return this.store;
		}

		@Bean
		RenewalScheduler renewalScheduler() {
			return this.scheduler;
		}

		@Bean
		DefaultLockTemplate lockTemplate() {
			return new DefaultLockTemplate(this.store, this.scheduler, defaults(), LeaseLossListener.NONE, false);
		}

		/** Another application instance on the same store. */
		LockTemplate otherInstance() {
			return new DefaultLockTemplate(this.store, this.scheduler, defaults());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(order = 42)
	static class OrderedLocks {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks(allowTypeReferencesInKeys = true)
	@Import(Store.class)
	static class TypeReferenceLocks {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class NoTemplate {

	}

	static class Jobs {

		@DistributedLock(key = "'job:' + #id")
		public Optional<Lease> run(String id, Supplier<Optional<Lease>> work) {
			return work.get();
		}

	}

	static class TypeReferenceJobs {

		@DistributedLock(key = "'abs:' + T(java.lang.Math).abs(-1)")
		public void run(Runnable work) {
			work.run();
		}

	}

	static class UnknownVariable {

		@DistributedLock(key = "#orderId")
		public void run(String id) {
		}

	}

	static class Unparsable {

		@DistributedLock(key = "'unclosed")
		public void run() {
		}

	}

	static class Named {

		@DistributedLock(key = "'named'", name = "stock")
		public void run() {
		}

	}

	static class Fair {

		@DistributedLock(key = "'fair'", fair = true)
		public void run() {
		}

	}

}
