package dev.distlock.reactive;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.OnLeaseLost;
import dev.distlock.support.ContextLocking;
import dev.distlock.support.DefaultLockTemplate;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * {@link ReactiveLockTemplate} over a {@link DefaultLockTemplate}: every wait is the
 * template's own asynchronous one, started and released on its wait workers
 * ({@link ContextLocking}), so the lines, take-overs, renewal and loss detection are
 * those of the blocking calls, and no subscriber's thread makes a store call.
 *
 * <p>
 * The lease never travels as a value the pipeline could drop: each subscription keeps the
 * answer of its own wait, and a subscription that ends by cancellation, at whatever
 * point, gives that answer up (a wait is withdrawn, a lease taken is released), so a lock
 * is never left held by a pipeline that went away.
 */
public final class DefaultReactiveLockTemplate implements ReactiveLockTemplate {

	private static final Log logger = LogFactory.getLog(DefaultReactiveLockTemplate.class);

	private final ContextLocking locking;

	private final Scheduler scheduler;

	/** Resumes pipelines on {@code Schedulers.parallel()}. */
	public DefaultReactiveLockTemplate(DefaultLockTemplate template) {
		this(template, Schedulers.parallel());
	}

	/**
	 * @param scheduler where a pipeline resumes after distlock's own steps (the lock
	 * taken, the lock released), so that its work never runs on distlock's threads
	 */
	public DefaultReactiveLockTemplate(DefaultLockTemplate template, Scheduler scheduler) {
		// Every answer resumes the pipeline on the scheduler (publishOn).
		this.locking = new ContextLocking(template, true);
		this.scheduler = scheduler;
	}

	@Override
	public Acquisition lock(String key, LockOptions options) {
		return Acquisition.of(this.locking, key, options);
	}

	@Override
	public Acquisition lockAll(Collection<String> keys, LockOptions options) {
		return Acquisition.ofAll(this.locking, keys, options);
	}

	@Override
	public Mono<Lease> acquire(String key, LockOptions options) {
		return lease(lock(key, options));
	}

	@Override
	public Mono<Lease> tryAcquire(String key, LockOptions options) {
		return lease(lock(key, options).orSkip());
	}

	@Override
	public Mono<MultiLease> acquireAll(Collection<String> keys, LockOptions options) {
		return lease(lockAll(keys, options)).cast(MultiLease.class);
	}

	@Override
	public Mono<MultiLease> tryAcquireAll(Collection<String> keys, LockOptions options) {
		return lease(lockAll(keys, options).orSkip()).cast(MultiLease.class);
	}

	/**
	 * The lease, handed to the subscriber; a subscription that ends before it is handed
	 * over gives the wait up and releases a lease taken meanwhile. Whichever of the two
	 * comes first wins; a lease handed over as the subscriber cancels is the
	 * subscriber's, as with any value Reactor delivers. The end is not taken from its
	 * signal: a cancel racing the answer can drop the lease on the way and still end the
	 * subscription as complete.
	 */
	private Mono<Lease> lease(Acquisition acquisition) {
		return Mono.deferContextual((context) -> {
			CompletableFuture<Optional<Lease>> answer = acquisition.start(ReactiveLockContext.leases(context));
			AtomicBoolean settled = new AtomicBoolean();
			return Mono.fromFuture(answer, true).publishOn(this.scheduler).<Lease>handle((found, sink) -> {
				if (found.isEmpty()) {
					RuntimeException failure = acquisition.notAcquired();
					if (failure != null) {
						sink.error(failure);
					}
				}
				else if (settled.compareAndSet(false, true)) {
					sink.next(found.get());
				}
				else {
					// The subscriber had already gone.
					this.locking.releaseQuietly(found.get());
				}
			}).doFinally((signal) -> {
				if (settled.compareAndSet(false, true)) {
					giveUp(answer);
				}
			});
		});
	}

	@Override
	public Mono<Void> release(Lease lease) {
		return Mono.fromFuture(() -> this.locking.release(lease)).publishOn(this.scheduler);
	}

	@Override
	public <T> Flux<T> holding(Acquisition acquisition, Supplier<? extends Publisher<T>> work) {
		return Flux.deferContextual((context) -> {
			CompletableFuture<Optional<Lease>> answer = acquisition.start(ReactiveLockContext.leases(context));
			AtomicBoolean working = new AtomicBoolean();
			return Mono.fromFuture(answer, true)
				.publishOn(this.scheduler)
				.flatMapMany((found) -> found.map((lease) -> run(working, lease, work))
					.orElseGet(() -> Flux.from(notAcquired(acquisition))))
				.doFinally((signal) -> ended(signal, working, answer));
		});
	}

	@Override
	public <T> Mono<T> holdingMono(Acquisition acquisition, Supplier<? extends Mono<T>> work) {
		return Mono.deferContextual((context) -> {
			CompletableFuture<Optional<Lease>> answer = acquisition.start(ReactiveLockContext.leases(context));
			AtomicBoolean working = new AtomicBoolean();
			return Mono.fromFuture(answer, true)
				.publishOn(this.scheduler)
				.flatMap((found) -> found.map((lease) -> runMono(working, lease, work))
					.orElseGet(() -> notAcquired(acquisition)))
				.doFinally((signal) -> ended(signal, working, answer));
		});
	}

	/**
	 * The work, with the lease in its context, then the release; a failure of the work
	 * reaches the subscriber after the release, with the release's own failure
	 * suppressed.
	 */
	private <T> Flux<T> run(AtomicBoolean working, Lease lease, Supplier<? extends Publisher<T>> work) {
		working.set(true);
		Flux<T> running = Flux.<T>defer(work).contextWrite((context) -> ReactiveLockContext.with(context, lease));
		if (this.locking.onLeaseLost(lease) == OnLeaseLost.INTERRUPT) {
			running = running.takeUntilOther(loss(lease));
		}
		return running.onErrorResume((problem) -> releasedAfter(lease, problem).then(Mono.error(problem)))
			.concatWith(released(lease).then(Mono.empty()));
	}

	private <T> Mono<T> runMono(AtomicBoolean working, Lease lease, Supplier<? extends Mono<T>> work) {
		working.set(true);
		Mono<T> running = Mono.<T>defer(work).contextWrite((context) -> ReactiveLockContext.with(context, lease));
		if (this.locking.onLeaseLost(lease) == OnLeaseLost.INTERRUPT) {
			running = running.takeUntilOther(loss(lease));
		}
		return running.onErrorResume((problem) -> releasedAfter(lease, problem).then(Mono.error(problem)))
			.flatMap((value) -> released(lease).thenReturn(value))
			.switchIfEmpty(released(lease).then(Mono.empty()));
	}

	private <T> Mono<T> notAcquired(Acquisition acquisition) {
		RuntimeException failure = acquisition.notAcquired();
		return (failure != null) ? Mono.error(failure) : Mono.empty();
	}

	/**
	 * A subscription ended: a cancelled one, or one whose lease never reached the work (a
	 * cancel racing the answer drops the lease on its way and may still end the
	 * subscription as complete), gives its wait up and releases a lease it got. Once the
	 * work ran, its own end released the lease, unless the subscription was cancelled.
	 */
	private void ended(SignalType signal, AtomicBoolean working, CompletableFuture<Optional<Lease>> answer) {
		if (signal == SignalType.CANCEL || !working.get()) {
			giveUp(answer);
		}
	}

	/**
	 * A subscription went away: its wait is given up, and a lease it got is released
	 * (again, harmlessly, if the work's end already did).
	 */
	private void giveUp(CompletableFuture<Optional<Lease>> answer) {
		answer.cancel(false);
		answer.thenAccept((found) -> found.ifPresent(this.locking::releaseQuietly));
	}

	/**
	 * Emits once {@code lease} is found lost, on the scheduler: the work it cuts short is
	 * cancelled there, never on the thread that found the loss.
	 */
	private Mono<Boolean> loss(Lease lease) {
		return Mono.<Boolean>create((sink) -> {
			Runnable remove = this.locking.whenLost(lease, () -> sink.success(Boolean.TRUE));
			sink.onDispose(remove::run);
		}).publishOn(this.scheduler);
	}

	/**
	 * The work completed: the release, whose loss fails the pipeline (unless
	 * {@code on-lease-lost} is {@code log}); a store that cannot be reached does not, as
	 * the work is done and the lock frees itself when its lease runs out.
	 */
	private Mono<Void> released(Lease lease) {
		return Mono.defer(() -> Mono.fromFuture(this.locking.release(lease).<Void>handle((done, failure) -> {
			if (failure instanceof LeaseLostException lost && this.locking.onLeaseLost(lease) != OnLeaseLost.LOG) {
				throw lost;
			}
			if (failure instanceof LockBackendException) {
				logger.warn("Could not release lock '" + lease.key() + "'; it expires when its lease runs out",
						failure);
			}
			else if (failure instanceof LeaseLostException) {
				logger.debug("Lease lost while held; on-lease-lost is LOG, so the pipeline completes", failure);
			}
			else if (failure instanceof RuntimeException other) {
				throw other;
			}
			return null;
		}))).publishOn(this.scheduler);
	}

	/**
	 * The work failed: the release, whose own failure (a loss, unless {@code log}) is
	 * added to the work's, which reaches the subscriber unchanged.
	 */
	private Mono<Void> releasedAfter(Lease lease, Throwable problem) {
		return Mono.defer(() -> Mono.fromFuture(this.locking.release(lease).<Void>handle((done, failure) -> {
			if (failure != null && failure != problem
					&& !(failure instanceof LeaseLostException && this.locking.onLeaseLost(lease) == OnLeaseLost.LOG)) {
				problem.addSuppressed(failure);
			}
			return null;
		}))).publishOn(this.scheduler);
	}

}
