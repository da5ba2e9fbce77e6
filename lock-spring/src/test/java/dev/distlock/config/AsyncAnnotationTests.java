package dev.distlock.config;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockContext;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.OnFailure;
import dev.distlock.aop.LockDeclarationException;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.reactive.ReactiveLockContext;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code @DistributedLock} on methods whose work ends after they return
 * ({@code CompletableFuture}, {@code Mono}, {@code Flux}), over a real in-process store:
 * the method is invoked only once the lock is held (for a publisher, on subscription),
 * the lock is held until the returned work completes, fails or is cancelled, then
 * released once; SKIP completes empty; a wait that runs out fails with the usual
 * exception; every kind of lock works; re-entry follows the Reactor context.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncAnnotationTests {

	private static final LockOptions NO_WAIT = LockOptions.builder().waitTime(Duration.ZERO).build();

	private final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
			InMemoryStore.class, Orders.class);

	private final Orders orders = this.context.getBean(Orders.class);

	/** What the target saw: the proxy's own fields are not the target's. */
	private final Probe probe = this.orders.probe();

	private final DefaultLockTemplate template = this.context.getBean(DefaultLockTemplate.class);

	/** Stands for another JVM on the same store. */
	private final DefaultLockTemplate other = this.context.getBean(InMemoryStore.class).other;

	@AfterEach
	void close() {
		this.other.close();
		this.context.close();
	}

	private static String key() {
		return UUID.randomUUID().toString();
	}

	private boolean heldElsewhere(String key) {
		Optional<Lease> lease = this.other.tryAcquire(key, NO_WAIT);
		lease.ifPresent(Lease::release);
		return lease.isEmpty();
	}

	@Test
	void aMonoMethodIsInvokedOnSubscriptionOnceHeldAndHoldsUntilItCompletes() {
		String key = key();
		Sinks.One<String> work = Sinks.one();
		Mono<String> result = this.orders.mono(key, work.asMono());
		assertThat(this.probe.calls).as("invoked before subscription").hasValue(0);
		assertThat(heldElsewhere("order:" + key)).as("held before subscription").isFalse();
		Lease held = this.other.acquire("order:" + key, LockOptions.defaults());
		AtomicReference<String> value = new AtomicReference<>();
		result.subscribe(value::set);
		awaitUntil("the subscriber waits in line", Duration.ofSeconds(10),
				() -> this.template.waitingThreads().getOrDefault("order:" + key, 0) == 1);
		assertThat(this.probe.calls).as("invoked while another holder had the lock").hasValue(0);
		held.release();
		awaitUntil("the method is invoked", Duration.ofSeconds(10), () -> this.probe.calls.get() == 1);
		assertThat(heldElsewhere("order:" + key)).as("held while the returned Mono is pending").isTrue();
		work.tryEmitValue("done");
		awaitUntil("the value arrives", Duration.ofSeconds(10), () -> value.get() != null);
		assertThat(heldElsewhere("order:" + key)).as("held once the Mono completed").isFalse();
		assertThat(this.probe.tokens).hasSize(1);
	}

	@Test
	void aFluxMethodHoldsAcrossItsElementsAndReleasesOnCancel() {
		String key = key();
		Sinks.Many<Integer> work = Sinks.many().unicast().onBackpressureBuffer();
		List<Integer> seen = new CopyOnWriteArrayList<>();
		Disposable subscription = this.orders.flux(key, work.asFlux()).subscribe(seen::add);
		awaitUntil("the method is invoked", Duration.ofSeconds(10), () -> this.probe.calls.get() == 1);
		work.tryEmitNext(1);
		awaitUntil("the first element", Duration.ofSeconds(10), () -> seen.size() == 1);
		assertThat(heldElsewhere("order:" + key)).as("held between elements").isTrue();
		subscription.dispose();
		awaitUntil("released on cancel", Duration.ofSeconds(10), () -> !heldElsewhere("order:" + key));
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void aCompletableFutureMethodHoldsUntilItsStageCompletes() throws Exception {
		String key = key();
		CompletableFuture<String> work = new CompletableFuture<>();
		CompletableFuture<String> result = this.orders.future(key, work);
		awaitUntil("the method is invoked", Duration.ofSeconds(10), () -> this.probe.calls.get() == 1);
		assertThat(heldElsewhere("order:" + key)).as("held while the stage is pending").isTrue();
		CompletableFuture<Boolean> freeWhenHeard = result.thenApply((value) -> !heldElsewhere("order:" + key));
		work.complete("done");
		assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo("done");
		assertThat(freeWhenHeard.get(10, TimeUnit.SECONDS)).as("released before the caller hears").isTrue();
		assertThat(this.probe.scoped).as("the method ran in the lease's scope").isTrue();
	}

	@Test
	void skipCompletesEmptyWithoutInvokingTheMethod() throws Exception {
		String key = key();
		Lease held = this.other.acquire("order:" + key, LockOptions.defaults());
		assertThat(this.orders.skipMono(key).blockOptional(Duration.ofSeconds(10))).isEmpty();
		assertThat(this.orders.skipFlux(key).collectList().block(Duration.ofSeconds(10))).isEmpty();
		assertThat(this.orders.skipFuture(key).get(10, TimeUnit.SECONDS)).isNull();
		assertThat(this.orders.skipOptionalFuture(key).get(10, TimeUnit.SECONDS)).isEmpty();
		assertThat(this.probe.calls).hasValue(0);
		held.release();
	}

	@Test
	void aWaitThatRunsOutFailsWithTheUsualException() {
		String key = key();
		Lease held = this.other.acquire("order:" + key, LockOptions.defaults());
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.orders.brief(key).block(Duration.ofSeconds(10)))
			.withMessageContaining("order:" + key);
		Throwable failure = catchThrowable(() -> this.orders.briefFuture(key).get(10, TimeUnit.SECONDS));
		assertThat(failure).isInstanceOf(ExecutionException.class).cause().isInstanceOf(LockAcquisitionException.class);
		assertThat(this.probe.calls).hasValue(0);
		held.release();
	}

	@Test
	void aLostLeaseFailsTheMono() {
		String key = key();
		Sinks.One<String> work = Sinks.one();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		this.orders.mono(key, work.asMono()).subscribe(null, failure::set);
		awaitUntil("the method is invoked", Duration.ofSeconds(10), () -> this.probe.calls.get() == 1);
		assertThat(this.context.getBean(InMemoryLockProvider.class).expire("order:" + key)).isTrue();
		work.tryEmitValue("done");
		awaitUntil("the Mono fails", Duration.ofSeconds(10), () -> failure.get() != null);
		assertThat(failure.get()).isInstanceOf(LeaseLostException.class);
	}

	/** An annotated Mono method called inside another on the same key re-enters. */
	@Test
	void aNestedCallOnTheSameKeyReentersThroughTheContext() {
		String key = key();
		String tokens = this.orders.outer(key, this.orders).block(Duration.ofSeconds(10));
		assertThat(tokens).matches("(\\d+) \\1");
		assertThat(this.template.heldLocks()).isZero();
	}

	@Test
	void everyKindOfLockWorks() throws Exception {
		String key = key();
		Sinks.One<String> firstReader = Sinks.one();
		AtomicReference<String> read = new AtomicReference<>();
		this.orders.read(key, firstReader.asMono()).subscribe(read::set);
		awaitUntil("the first reader holds", Duration.ofSeconds(10), () -> this.probe.calls.get() == 1);
		assertThat(this.orders.read(key, Mono.just("second")).block(Duration.ofSeconds(10)))
			.as("a second reader while the first holds")
			.isEqualTo("second");
		firstReader.tryEmitValue("first");
		awaitUntil("the first reader ends", Duration.ofSeconds(10), () -> read.get() != null);
		Sinks.One<String> firstPermit = Sinks.one();
		this.orders.permit(key, firstPermit.asMono()).subscribe();
		awaitUntil("the first permit holder is in", Duration.ofSeconds(10), () -> this.probe.calls.get() == 3);
		assertThat(this.orders.permit(key, Mono.just("second")).block(Duration.ofSeconds(10))).isEqualTo("second");
		firstPermit.tryEmitValue("first");
		assertThat(this.orders.fair(key).block(Duration.ofSeconds(10))).isEqualTo("fair");
		assertThat(this.orders.both(key + "-a", key + "-b").collectList().block(Duration.ofSeconds(10)))
			.containsExactly("both");
		assertThat(this.orders.bothFuture(key + "-c", key + "-d").get(10, TimeUnit.SECONDS)).isEqualTo("both");
		awaitUntil("every lock released", Duration.ofSeconds(10), () -> this.template.heldLocks() == 0);
	}

	@Test
	void aReactiveReadLockOnAStoreWithoutReadLocksFailsStartup() {
		AnnotationConfigApplicationContext failing = new AnnotationConfigApplicationContext();
		failing.register(MapStore.class, ReactiveReaders.class);
		Throwable failure = catchThrowable(failing::refresh);
		assertThat(failure).isInstanceOf(LockDeclarationException.class).hasMessageContaining("lock kind SHARED");
	}

	/** Polls {@code condition} until it holds, failing after {@code timeout}. */
	private static void awaitUntil(String what, Duration timeout, java.util.function.BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new AssertionError("Timed out after " + timeout + " waiting until " + what);
			}
			java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
		}
	}

	private static LockOptions defaults() {
		return LockOptions.builder()
			.waitTime(Duration.ofSeconds(20))
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableDistributedLocks
	static class InMemoryStore {

		private final InMemoryLockProvider store = new InMemoryLockProvider();

		private final RenewalScheduler scheduler = new RenewalScheduler();

		final DefaultLockTemplate other = new DefaultLockTemplate(this.store, this.scheduler, defaults());

		@Bean
		InMemoryLockProvider lockProvider() {
			return this.store;
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
	static class MapStore {

		private final RenewalScheduler scheduler = new RenewalScheduler();

		@Bean
		LockProvider lockProvider() {
			return new MapLockProvider();
		}

		@Bean
		DefaultLockTemplate lockTemplate(LockProvider lockProvider) {
			return new DefaultLockTemplate(lockProvider, this.scheduler, defaults());
		}

	}

	static class ReactiveReaders {

		@DistributedLock(key = "#key", mode = LockMode.READ)
		public Mono<String> read(String key) {
			return Mono.just(key);
		}

	}

	static final class Probe {

		final AtomicInteger calls = new AtomicInteger();

		final List<Long> tokens = new CopyOnWriteArrayList<>();

		final AtomicBoolean scoped = new AtomicBoolean();

	}

	static class Orders {

		private final Probe probe = new Probe();

		private final AtomicInteger calls = this.probe.calls;

		private final List<Long> tokens = this.probe.tokens;

		private final AtomicBoolean scoped = this.probe.scoped;

		public Probe probe() {
			return this.probe;
		}

		@DistributedLock(key = "'order:' + #key")
		public Mono<String> mono(String key, Mono<String> work) {
			this.calls.incrementAndGet();
			return ReactiveLockContext.current().doOnNext((lease) -> this.tokens.add(lease.fencingToken())).then(work);
		}

		@DistributedLock(key = "'order:' + #key")
		public Flux<Integer> flux(String key, Flux<Integer> work) {
			this.calls.incrementAndGet();
			return work;
		}

		@DistributedLock(key = "'order:' + #key")
		public CompletableFuture<String> future(String key, CompletableFuture<String> work) {
			this.calls.incrementAndGet();
			this.scoped.set(LockContext.current().map(Lease::key).filter(("order:" + key)::equals).isPresent());
			return work;
		}

		@DistributedLock(key = "'order:' + #key", onFailure = OnFailure.SKIP, waitTime = "0s")
		public Mono<String> skipMono(String key) {
			this.calls.incrementAndGet();
			return Mono.just("ran");
		}

		@DistributedLock(key = "'order:' + #key", onFailure = OnFailure.SKIP, waitTime = "0s")
		public Flux<String> skipFlux(String key) {
			this.calls.incrementAndGet();
			return Flux.just("ran");
		}

		@DistributedLock(key = "'order:' + #key", onFailure = OnFailure.SKIP, waitTime = "0s")
		public CompletableFuture<String> skipFuture(String key) {
			this.calls.incrementAndGet();
			return CompletableFuture.completedFuture("ran");
		}

		@DistributedLock(key = "'order:' + #key", onFailure = OnFailure.SKIP, waitTime = "0s")
		public CompletableFuture<Optional<String>> skipOptionalFuture(String key) {
			this.calls.incrementAndGet();
			return CompletableFuture.completedFuture(Optional.of("ran"));
		}

		@DistributedLock(key = "'order:' + #key", waitTime = "200ms")
		public Mono<String> brief(String key) {
			this.calls.incrementAndGet();
			return Mono.just("ran");
		}

		@DistributedLock(key = "'order:' + #key", waitTime = "200ms")
		public CompletableFuture<String> briefFuture(String key) {
			this.calls.incrementAndGet();
			return CompletableFuture.completedFuture("ran");
		}

		@DistributedLock(key = "'nested:' + #key")
		public Mono<String> outer(String key, Orders self) {
			return ReactiveLockContext.current()
				.flatMap((lease) -> self.inner(key).map((inner) -> lease.fencingToken() + " " + inner));
		}

		@DistributedLock(key = "'nested:' + #key", waitTime = "0s")
		public Mono<String> inner(String key) {
			return ReactiveLockContext.current("nested:" + key).map((lease) -> String.valueOf(lease.fencingToken()));
		}

		@DistributedLock(key = "'catalog:' + #key", mode = LockMode.READ)
		public Mono<String> read(String key, Mono<String> work) {
			this.calls.incrementAndGet();
			return work;
		}

		@DistributedLock(key = "'exports:' + #key", permits = 2, waitTime = "0s")
		public Mono<String> permit(String key, Mono<String> work) {
			this.calls.incrementAndGet();
			return work;
		}

		@DistributedLock(key = "'fair:' + #key", fair = true)
		public Mono<String> fair(String key) {
			return Mono.just("fair");
		}

		@DistributedLock(keys = { "#first", "#second" })
		public Flux<String> both(String first, String second) {
			return Flux.just("both");
		}

		@DistributedLock(keys = { "#first", "#second" })
		public CompletableFuture<String> bothFuture(String first, String second) {
			return CompletableFuture.completedFuture("both");
		}

	}

}
