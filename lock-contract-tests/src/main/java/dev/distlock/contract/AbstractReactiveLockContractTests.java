package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.reactive.DefaultReactiveLockTemplate;
import dev.distlock.reactive.ReactiveLockContext;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the reactive template must do on every store, through the store's provider: the
 * lock is taken only on subscription and the work starts only once it is held; holders on
 * two templates (two JVMs) exclude each other with rising fencing tokens; the lock is
 * released once when the work completes (before the subscriber hears), fails or is
 * cancelled; a cancelled wait leaves no lock; a wait that runs out fails naming the key,
 * or completes empty when it skips; re-entry follows the Reactor context; every kind the
 * store offers (fair, read/write, permits, several keys) works. A store module extends
 * this class with a provider on a real, running store and a second provider on the same
 * store (as another JVM would have); needs reactor-core on the test class path.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractReactiveLockContractTests {

	private static final LockOptions NO_WAIT = LockOptions.builder().waitTime(Duration.ZERO).build();

	private static final LockOptions PATIENT = LockOptions.builder().waitTime(Duration.ofSeconds(30)).build();

	/** A provider for the store under test; called once per test. */
	protected abstract LockProvider provider();

	/** A second provider on the same store, as another JVM would have. */
	protected abstract LockProvider otherProvider();

	private TwoTemplates templates;

	private DefaultReactiveLockTemplate reactive;

	private DefaultReactiveLockTemplate otherReactive;

	@BeforeEach
	void templates() {
		this.templates = new TwoTemplates(provider(), otherProvider());
		this.reactive = new DefaultReactiveLockTemplate(this.templates.first);
		this.otherReactive = new DefaultReactiveLockTemplate(this.templates.second);
	}

	@AfterEach
	void closeTemplates() {
		this.templates.close();
	}

	private static String key() {
		return "reactive-" + UUID.randomUUID();
	}

	private boolean heldElsewhere(String key, LockOptions options) {
		Optional<Lease> lease = this.templates.second.tryAcquire(key,
				LockOptions.builder().waitTime(Duration.ZERO).build().orElse(options));
		lease.ifPresent(Lease::release);
		return lease.isEmpty();
	}

	private boolean heldElsewhere(String key) {
		return heldElsewhere(key, LockOptions.defaults());
	}

	private void assumeKind(LockKind kind) {
		assumeTrue(provider().kinds().contains(kind), () -> provider().storeName() + " offers no " + kind);
	}

	@Test
	void holdersOnTwoTemplatesExcludeEachOtherWithRisingTokens() {
		String key = key();
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Long> tokens = new CopyOnWriteArrayList<>();
		List<Mono<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			DefaultReactiveLockTemplate caller = (i % 2 == 0) ? this.reactive : this.otherReactive;
			int index = i;
			runs.add(caller.executeMono(key, PATIENT, () -> ReactiveLockContext.current().map((lease) -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				tokens.add(lease.fencingToken());
				return index;
			}).delayElement(Duration.ofMillis(1)).doOnNext((value) -> inside.decrementAndGet())));
		}
		List<Integer> done = Flux.merge(runs).collectList().block(Duration.ofSeconds(50));
		assertThat(done).hasSize(40);
		assertThat(overlaps).hasValue(0);
		assertThat(tokens).hasSize(40).isSorted().doesNotHaveDuplicates();
		assertThat(heldElsewhere(key)).isFalse();
	}

	@Test
	void nothingIsTakenBeforeSubscriptionAndTheWorkStartsOnlyOnceHeld() {
		String key = key();
		AtomicBoolean started = new AtomicBoolean();
		Mono<String> run = this.reactive.executeMono(key, PATIENT, () -> {
			started.set(true);
			return Mono.just("done");
		});
		assertThat(heldElsewhere(key)).as("held before subscription").isFalse();
		Lease held = this.templates.second.acquire(key, LockOptions.defaults());
		AtomicReference<String> result = new AtomicReference<>();
		run.subscribe(result::set);
		Conditions.await("the subscriber waits in line", Duration.ofSeconds(10),
				() -> this.templates.first.waitingThreads().getOrDefault(key, 0) == 1);
		assertThat(started).as("started while another holder had the lock").isFalse();
		held.release();
		Conditions.await("the work ran", Duration.ofSeconds(20), () -> "done".equals(result.get()));
		assertThat(started).isTrue();
	}

	@Test
	void theLockIsHeldUntilTheWorkCompletesAndFreeWhenTheSubscriberHears() {
		String key = key();
		Sinks.Many<Integer> work = Sinks.many().unicast().onBackpressureBuffer();
		AtomicBoolean freeWhenHeard = new AtomicBoolean();
		AtomicBoolean completed = new AtomicBoolean();
		this.reactive.execute(key, work::asFlux)
			.doOnComplete(() -> freeWhenHeard.set(!heldElsewhere(key)))
			.subscribe(null, null, () -> completed.set(true));
		Conditions.await("the work runs holding the lock", Duration.ofSeconds(10),
				() -> this.templates.first.heldLocks() == 1);
		work.tryEmitNext(1);
		assertThat(heldElsewhere(key)).as("held between elements").isTrue();
		work.tryEmitComplete();
		Conditions.await("the pipeline completes", Duration.ofSeconds(10), completed::get);
		assertThat(freeWhenHeard).as("free when the subscriber hears").isTrue();
	}

	@Test
	void aFailureReachesTheSubscriberUnchangedAfterTheRelease() {
		String key = key();
		IllegalStateException boom = new IllegalStateException("boom");
		AtomicBoolean freeWhenHeard = new AtomicBoolean();
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.reactive.executeMono(key, LockOptions.defaults(), () -> Mono.<String>error(boom))
				.doOnError((ex) -> freeWhenHeard.set(!heldElsewhere(key)))
				.block(Duration.ofSeconds(20)))
			.isSameAs(boom);
		assertThat(freeWhenHeard).isTrue();
	}

	@Test
	void cancellingTheWorkOrTheWaitLeavesNoLock() {
		String key = key();
		Disposable running = this.reactive.execute(key, Flux::never).subscribe();
		Conditions.await("the work runs holding the lock", Duration.ofSeconds(10),
				() -> this.templates.first.heldLocks() == 1);
		Disposable waiting = this.reactive.execute(key, PATIENT, () -> Flux.just(1)).subscribe();
		Conditions.await("the second waits in line", Duration.ofSeconds(10),
				() -> this.templates.first.waitingThreads().getOrDefault(key, 0) >= 1);
		waiting.dispose();
		running.dispose();
		// A cancelled pipeline has nobody to tell of its release, which lands in the
		// store after the template let go of the lease.
		Conditions.await("no lock is held", Duration.ofSeconds(20), () -> this.templates.first.heldLocks() == 0
				&& this.templates.first.queuedKeys() == 0 && !heldElsewhere(key));
	}

	@Test
	void aWaitThatRunsOutFailsNamingTheKeyOrSkips() {
		String key = key();
		Lease held = this.templates.second.acquire(key, LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		LockOptions brief = LockOptions.builder().waitTime(Duration.ofMillis(200)).build();
		assertThatExceptionOfType(LockAcquisitionException.class)
			.isThrownBy(() -> this.reactive.execute(key, brief, () -> {
				started.set(true);
				return Flux.just(1);
			}).blockLast(Duration.ofSeconds(20)))
			.withMessageContaining(key);
		assertThat(this.reactive.holding(this.reactive.lock(key, NO_WAIT).orSkip(), () -> {
			started.set(true);
			return Flux.just(1);
		}).collectList().block(Duration.ofSeconds(20))).isEmpty();
		assertThat(this.reactive.tryAcquire(key, NO_WAIT).blockOptional(Duration.ofSeconds(20))).isEmpty();
		assertThat(started).isFalse();
		held.release();
	}

	@Test
	void aNestedAcquisitionOfTheKeyReentersThroughTheContext() {
		String key = key();
		String tokens = this.reactive
			.executeMono(key, LockOptions.defaults(), () -> ReactiveLockContext.current()
				.flatMap((outer) -> this.reactive.executeMono(key, NO_WAIT, () -> ReactiveLockContext.current(key))
					.map((inner) -> outer.fencingToken() + " " + inner.fencingToken())))
			.block(Duration.ofSeconds(20));
		assertThat(tokens).matches("(\\d+) \\1");
		assertThat(this.templates.first.heldLocks()).isZero();
	}

	@Test
	void fairLocksWork() {
		assumeKind(LockKind.FAIR);
		String key = key();
		LockOptions fair = LockOptions.builder().fair(true).build();
		assertThat(this.reactive.executeMono(key, fair, () -> Mono.fromSupplier(() -> heldElsewhere(key, fair)))
			.block(Duration.ofSeconds(20))).as("held while the work ran").isTrue();
		// The refused look's place in the fair queue is given up in the background, so
		// for a moment it may still stand ahead of the next one.
		Conditions.await("free after the work", Duration.ofSeconds(10), () -> !heldElsewhere(key, fair));
	}

	@Test
	void readersShareAndAWriterWaitsForThem() {
		assumeKind(LockKind.SHARED);
		String key = key();
		LockOptions read = LockOptions.builder().mode(LockMode.READ).build();
		Sinks.One<String> firstReader = Sinks.one();
		this.reactive.executeMono(key, read, firstReader::asMono).subscribe();
		Conditions.await("the first reader holds", Duration.ofSeconds(10), () -> this.templates.first.heldLocks() == 1);
		assertThat(this.otherReactive.executeMono(key, NO_WAIT.orElse(read), () -> Mono.just("second"))
			.block(Duration.ofSeconds(20))).isEqualTo("second");
		assertThat(heldElsewhere(key)).as("the write lock while a reader holds").isTrue();
		firstReader.tryEmitValue("first");
		Conditions.await("the reader ends", Duration.ofSeconds(10), () -> this.templates.first.heldLocks() == 0);
		assertThat(this.otherReactive.executeMono(key, LockOptions.defaults(), () -> Mono.just("writer"))
			.block(Duration.ofSeconds(20))).isEqualTo("writer");
	}

	@Test
	void permitsAdmitTheirCount() {
		assumeKind(LockKind.PERMITS);
		String key = key();
		LockOptions two = LockOptions.builder().permits(2).build();
		Sinks.One<String> first = Sinks.one();
		this.reactive.executeMono(key, two, first::asMono).subscribe();
		Conditions.await("the first permit is held", Duration.ofSeconds(10),
				() -> this.templates.first.heldLocks() == 1);
		Sinks.One<String> second = Sinks.one();
		this.otherReactive.executeMono(key, two, second::asMono).subscribe();
		Conditions.await("the second permit is held", Duration.ofSeconds(10),
				() -> this.templates.second.heldLocks() == 1);
		assertThat(this.reactive.tryAcquire(key, NO_WAIT.orElse(two)).blockOptional(Duration.ofSeconds(20)))
			.as("a third permit")
			.isEmpty();
		first.tryEmitValue("done");
		second.tryEmitValue("done");
		Conditions.await("both permits released", Duration.ofSeconds(10),
				() -> this.templates.first.heldLocks() == 0 && this.templates.second.heldLocks() == 0);
	}

	@Test
	void severalKeysAreTakenAllOrNone() {
		assumeKind(LockKind.MULTI);
		String key = key();
		List<String> keys = List.of(key + "-a", key + "-b");
		Lease held = this.templates.second.acquire(keys.get(1), LockOptions.defaults());
		AtomicBoolean started = new AtomicBoolean();
		AtomicReference<List<String>> result = new AtomicReference<>();
		this.reactive.executeAll(keys, PATIENT, () -> {
			started.set(true);
			return Flux.fromIterable(keys).filter(this::heldElsewhere);
		}).collectList().subscribe(result::set);
		// An attempt in flight may hold a row or slot of the free key for a moment; a
		// wait that kept it would hold it until the busy key is released.
		Conditions.await("the free key left free while another is busy", Duration.ofSeconds(10),
				() -> !heldElsewhere(keys.get(0)));
		assertThat(started).isFalse();
		held.release();
		Conditions.await("the work ran", Duration.ofSeconds(20), () -> result.get() != null);
		assertThat(result.get()).as("keys held while the work ran").containsExactlyElementsOf(keys);
		assertThat(this.templates.first.heldLocks()).isZero();
	}

}
