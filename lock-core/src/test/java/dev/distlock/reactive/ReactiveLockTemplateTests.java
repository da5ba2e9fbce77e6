package dev.distlock.reactive;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.support.Await;
import dev.distlock.support.Closing;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DefaultReactiveLockTemplate} on the in-memory store, for what only this store
 * lets a test do (expire a held lock, count the releases the template's observer hears):
 * one release per hold whatever ends the work, a loss signalled per on-lease-lost, a
 * lease that arrives for a subscriber that left released. The behaviour every store
 * shares is the reactive contract suite's, in lock-contract-tests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReactiveLockTemplateTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	@AutoClose
	private final Closing closing = new Closing();

	private final HoldOutcomes outcomes = new HoldOutcomes();

	private final DefaultLockTemplate template = template(Duration.ofSeconds(30), this.outcomes);

	private final DefaultReactiveLockTemplate reactive = new DefaultReactiveLockTemplate(this.template);

	/** Stands for another JVM on the same store. */
	private final DefaultLockTemplate other = template(Duration.ofSeconds(30), LockObserver.NONE);

	private DefaultLockTemplate template(Duration leaseTime, LockObserver observer) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(10))
					.leaseTime(leaseTime)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build(),
				LeaseLossListener.NONE, true, observer, HandoverSettings.DEFAULTS);
		this.closing.add(template);
		return template;
	}

	private static String key() {
		return "reactive-" + UUID.randomUUID();
	}

	private boolean heldElsewhere(String key) {
		Optional<Lease> lease = this.other.tryAcquire(key, LockOptions.builder().waitTime(Duration.ZERO).build());
		lease.ifPresent(Lease::release);
		return lease.isEmpty();
	}

	@Test
	void aCompletedPipelineReleasesOnceBeforeTheSubscriberHears() {
		String key = key();
		Sinks.One<String> work = Sinks.one();
		AtomicBoolean freeWhenHeard = new AtomicBoolean();
		Mono<String> run = this.reactive.executeMono(key, LockOptions.defaults(), work::asMono)
			.doOnSuccess((value) -> freeWhenHeard.set(!heldElsewhere(key)));
		AtomicReference<String> result = new AtomicReference<>();
		run.subscribe(result::set);
		Await.until("the work runs holding the lock", Duration.ofSeconds(10), () -> heldElsewhere(key));
		work.tryEmitValue("done");
		Await.until("the pipeline completes", Duration.ofSeconds(10), () -> result.get() != null);
		assertThat(freeWhenHeard).as("free when the subscriber hears").isTrue();
		assertThat(this.outcomes.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
	}

	@Test
	void aCancelledPipelineReleasesOnceAndCancelsTheWork() {
		String key = key();
		AtomicBoolean workCancelled = new AtomicBoolean();
		AtomicBoolean started = new AtomicBoolean();
		Disposable subscription = this.reactive.execute(key,
				() -> Flux.never().doOnSubscribe((s) -> started.set(true)).doOnCancel(() -> workCancelled.set(true)))
			.subscribe();
		Await.until("the work runs", Duration.ofSeconds(10), started::get);
		assertThat(heldElsewhere(key)).isTrue();
		subscription.dispose();
		Await.until("the lock is free", Duration.ofSeconds(10), () -> !heldElsewhere(key));
		// A cancel that overtakes the work's subscription on its way downstream reaches
		// the work once that subscription arrives, on the scheduler's thread.
		Await.until("the work is cancelled", Duration.ofSeconds(10), workCancelled::get);
		// The observer hears of the release after the store has freed the key.
		Await.until("the release is told", Duration.ofSeconds(10),
				() -> !this.outcomes.of(key).isEmpty() && this.template.heldLocks() == 0);
		assertThat(this.outcomes.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
	}

	@Test
	void aLeaseLostWhileTheWorkRunsFailsThePipelineWhenItEnds() {
		String key = key();
		Sinks.One<String> work = Sinks.one();
		Mono<String> run = this.reactive.executeMono(key, LockOptions.defaults(), work::asMono);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		run.subscribe(null, failure::set);
		Await.until("the work runs holding the lock", Duration.ofSeconds(10), () -> heldElsewhere(key));
		assertThat(this.store.expire(key)).isTrue();
		work.tryEmitValue("done");
		Await.until("the pipeline fails", Duration.ofSeconds(10), () -> failure.get() != null);
		assertThat(failure.get()).isInstanceOf(LeaseLostException.class).hasMessageContaining(key);
	}

	@Test
	void aLeaseLostWhileTheWorkFailsIsAddedToItsFailure() {
		String key = key();
		IllegalStateException boom = new IllegalStateException("boom");
		Sinks.Many<String> work = Sinks.many().unicast().onBackpressureBuffer();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		this.reactive.execute(key, work::asFlux).subscribe(null, failure::set);
		Await.until("the work runs holding the lock", Duration.ofSeconds(10), () -> heldElsewhere(key));
		assertThat(this.store.expire(key)).isTrue();
		work.tryEmitError(boom);
		Await.until("the pipeline fails", Duration.ofSeconds(10), () -> failure.get() != null);
		assertThat(failure.get()).isSameAs(boom);
		assertThat(boom.getSuppressed()).hasSize(1).hasOnlyElementsOfType(LeaseLostException.class);
	}

	/**
	 * With on-lease-lost INTERRUPT the work is cancelled as soon as the loss is found
	 * (here by the next renewal of a short lease), and the pipeline fails with the loss.
	 */
	@Test
	void interruptCancelsTheWorkAtTheLossAndFails() {
		String key = key();
		DefaultReactiveLockTemplate shortLeases = new DefaultReactiveLockTemplate(
				template(Duration.ofMillis(600), LockObserver.NONE));
		AtomicBoolean workCancelled = new AtomicBoolean();
		AtomicReference<Throwable> failure = new AtomicReference<>();
		LockOptions interrupt = LockOptions.builder().onLeaseLost(OnLeaseLost.INTERRUPT).build();
		AtomicBoolean started = new AtomicBoolean();
		shortLeases.execute(key, interrupt,
				() -> Flux.never().doOnSubscribe((s) -> started.set(true)).doOnCancel(() -> workCancelled.set(true)))
			.subscribe(null, failure::set);
		Await.until("the work runs", Duration.ofSeconds(10), started::get);
		assertThat(this.store.expire(key)).isTrue();
		Await.until("the pipeline fails", Duration.ofSeconds(10), () -> failure.get() != null);
		assertThat(workCancelled).isTrue();
		assertThat(failure.get()).isInstanceOf(LeaseLostException.class);
	}

	/** With on-lease-lost LOG the pipeline completes as the work does. */
	@Test
	void logCompletesThePipelineDespiteTheLoss() {
		String key = key();
		Sinks.One<String> work = Sinks.one();
		LockOptions log = LockOptions.builder().onLeaseLost(OnLeaseLost.LOG).build();
		AtomicReference<String> result = new AtomicReference<>();
		this.reactive.executeMono(key, log, work::asMono).subscribe(result::set);
		Await.until("the work runs holding the lock", Duration.ofSeconds(10), () -> heldElsewhere(key));
		assertThat(this.store.expire(key)).isTrue();
		work.tryEmitValue("done");
		Await.until("the pipeline completes", Duration.ofSeconds(10), () -> "done".equals(result.get()));
	}

	/**
	 * A nested execute of the same key re-enters through the Context, on another thread
	 * than the outer one subscribed on: one store acquisition, one token.
	 */
	@Test
	void aNestedExecuteReentersThroughTheContextOnAnyThread() {
		String key = key();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		Mono<String> nested = this.reactive
			.executeMono(key, LockOptions.builder().waitTime(Duration.ZERO).build(),
					() -> ReactiveLockContext.current(key)
						.doOnNext((lease) -> tokens.add(lease.fencingToken()))
						.map((lease) -> Thread.currentThread().getName()))
			.subscribeOn(Schedulers.boundedElastic());
		String thread = this.reactive.executeMono(key, LockOptions.defaults(),
				() -> ReactiveLockContext.current().doOnNext((lease) -> tokens.add(lease.fencingToken())).then(nested))
			.block(Duration.ofSeconds(10));
		assertThat(thread).isNotNull();
		assertThat(tokens).hasSize(2).containsOnly(tokens.get(0));
		assertThat(this.outcomes.of(key)).containsExactly(LockObserver.HoldOutcome.RELEASED);
		assertThat(this.template.heldLocks()).isZero();
	}

	/** Outside any locked work the context holds no lease. */
	@Test
	void outsideLockedWorkThereIsNoCurrentLease() {
		assertThat(ReactiveLockContext.current().blockOptional(Duration.ofSeconds(5))).isEmpty();
		assertThat(ReactiveLockContext.current("x").blockOptional(Duration.ofSeconds(5))).isEmpty();
	}

	/**
	 * Pipelines cancelled at every point of their acquisition or of their work, and bare
	 * acquisitions cancelled while they wait: no lock is left held.
	 */
	@Test
	void aSubscriptionCancelledAtAnyPointLeavesNoLockHeld() {
		String busy = key();
		Lease held = this.other.acquire(busy, LockOptions.defaults());
		for (int i = 0; i < 300; i++) {
			Disposable waiting = this.reactive.acquire(busy, LockOptions.defaults()).subscribe();
			Disposable running = this.reactive.execute(key(), Flux::never).subscribe();
			spin(i * 1000L);
			waiting.dispose();
			running.dispose();
		}
		held.release();
		// A release ends the hold in the template before its delete reaches the store.
		Await.until("no lock is held", Duration.ofSeconds(10), () -> this.template.heldLocks() == 0
				&& this.template.queuedKeys() == 0 && this.store.storedKeys() == 0);
	}

	private static void spin(long nanos) {
		long start = System.nanoTime();
		while (System.nanoTime() - start < nanos) {
			Thread.onSpinWait();
		}
	}

	@Test
	void aWaitThatRunsOutFailsNamingTheKeyAndSkipCompletesEmpty() {
		String key = key();
		Lease held = this.other.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		LockOptions brief = LockOptions.builder().waitTime(Duration.ofMillis(200)).build();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.reactive.execute(key, brief, () -> {
				started.set(true);
				return Flux.just(1);
			}).blockLast(Duration.ofSeconds(10)))
			.withMessageContaining(key);
		assertThat(this.reactive.holding(this.reactive.lock(key, brief).orSkip(), () -> {
			started.set(true);
			return Flux.just(1);
		}).collectList().block(Duration.ofSeconds(10))).isEmpty();
		assertThat(started).isFalse();
		held.release();
	}

	/** No subscription, no lock: a pipeline built but never subscribed takes nothing. */
	@Test
	void aPipelineThatIsNeverSubscribedTakesNoLock() {
		String key = key();
		AtomicInteger calls = new AtomicInteger();
		Flux<Integer> run = this.reactive.execute(key, () -> {
			calls.incrementAndGet();
			return Flux.just(1);
		});
		assertThat(heldElsewhere(key)).isFalse();
		assertThat(this.template.queuedKeys()).isZero();
		assertThat(calls).hasValue(0);
		assertThat(run.blockLast(Duration.ofSeconds(10))).isEqualTo(1);
		assertThat(calls).hasValue(1);
	}

	/** How each hold of a key ended, as the template's observer hears it. */
	static final class HoldOutcomes implements LockObserver {

		private final Map<String, List<HoldOutcome>> outcomes = new ConcurrentHashMap<>();

		@Override
		public Acquisition acquiring(String key, @Nullable String name, boolean fair) {
			return new Acquisition() {
				@Override
				public Holding acquired(Lease lease) {
					return (outcome, error) -> HoldOutcomes.this.outcomes
						.computeIfAbsent(key, (k) -> new CopyOnWriteArrayList<>())
						.add(outcome);
				}
			};
		}

		List<HoldOutcome> of(String key) {
			return this.outcomes.getOrDefault(key, List.of());
		}

	}

}
