package dev.distlock.reactive;

import java.util.Collection;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Distributed locking for Reactor pipelines: the same locks, kinds, options and
 * guarantees as {@link dev.distlock.LockTemplate}, without ever blocking a thread.
 *
 * <ul>
 * <li><b>Lazy.</b> Nothing happens until subscription: a {@code Mono} or {@code Flux}
 * from here that is never subscribed takes no lock. Each subscription is an acquisition
 * of its own.</li>
 * <li><b>Non-blocking.</b> The subscribing thread (an event loop, a
 * {@code Schedulers.parallel()} worker) never makes a store call and never waits: the
 * wait, every attempt and every release run on a few shared threads of the template, and
 * the pipeline is resumed on the template's scheduler ({@code Schedulers.parallel()}
 * unless configured otherwise), so its own work never runs on distlock's threads.</li>
 * <li><b>Held until the work ends.</b> {@link #execute} subscribes to the work only once
 * the lock is held, keeps the lease renewed until the work completes, fails or is
 * cancelled, and releases it exactly once then; the downstream hears of completion or
 * failure only after the release.</li>
 * <li><b>Loss is never silent.</b> A lease lost while the work runs fails the pipeline
 * with {@link dev.distlock.LeaseLostException} when the work ends, or, if the work
 * failed, is added to its failure as suppressed; with {@code on-lease-lost: interrupt}
 * the work is cancelled at once and the pipeline fails; with {@code log} only the warning
 * and the event remain.</li>
 * <li><b>Re-entry follows the pipeline.</b> The work runs with its lease in the Reactor
 * {@code Context} ({@link ReactiveLockContext}), so an acquisition of the same key inside
 * it, on whatever thread, re-enters the held lock; a lease held by a thread's
 * {@link dev.distlock.LockContext} scope is never re-entered from a pipeline.</li>
 * <li><b>A wait that runs out</b> fails with
 * {@link dev.distlock.LockAcquisitionException} naming the key; cancelling a subscription
 * while it waits gives the wait up and releases a lock taken meanwhile.</li>
 * </ul>
 */
public interface ReactiveLockTemplate {

	/**
	 * Acquires the lock on {@code key} on subscription, waiting up to the wait time. The
	 * lease emitted belongs to the subscriber, which must release it
	 * ({@link #release(Lease)}); a subscription cancelled before the lease is emitted
	 * releases it. Inside a pipeline that holds {@code key} it re-enters it.
	 * @return emits the lease; fails with {@link dev.distlock.LockAcquisitionException}
	 * at the wait time, or {@link dev.distlock.LockBackendException} if the store failed
	 */
	Mono<Lease> acquire(String key, LockOptions options);

	/** As {@link #acquire}, completing empty if the lock was not acquired in time. */
	Mono<Lease> tryAcquire(String key, LockOptions options);

	/**
	 * Acquires the locks on every one of {@code keys} on subscription, all or none, as
	 * {@link dev.distlock.LockTemplate#acquireAll} does.
	 */
	Mono<MultiLease> acquireAll(Collection<String> keys, LockOptions options);

	/** As {@link #acquireAll}, completing empty if the locks were not all acquired. */
	Mono<MultiLease> tryAcquireAll(Collection<String> keys, LockOptions options);

	/**
	 * Releases {@code lease} without blocking the subscriber: completes once released;
	 * fails with {@link dev.distlock.LeaseLostException} if it was lost while held.
	 */
	Mono<Void> release(Lease lease);

	/**
	 * Describes the acquisition of the lock on {@code key}, for {@link #holding}; takes
	 * nothing by itself.
	 */
	Acquisition lock(String key, LockOptions options);

	/**
	 * Describes the acquisition of the locks on every one of {@code keys}, all or none,
	 * for {@link #holding}; takes nothing by itself.
	 */
	Acquisition lockAll(Collection<String> keys, LockOptions options);

	/**
	 * Runs the publisher that {@code work} returns holding what {@code acquisition}
	 * takes, as described on this type: on each subscription the lock is acquired, and
	 * only once it is held is {@code work} called and its publisher subscribed, with the
	 * lease in its context; the lease is released once the work ends, whatever ends it,
	 * and before the subscriber hears of completion or failure. A wait that runs out
	 * fails with {@link dev.distlock.LockAcquisitionException}, or, for an acquisition
	 * {@linkplain Acquisition#orSkip() that skips}, completes empty; {@code work} is
	 * never called then.
	 */
	<T> Flux<T> holding(Acquisition acquisition, Supplier<? extends Publisher<T>> work);

	/** {@link #holding} for work that emits at most one value. */
	<T> Mono<T> holdingMono(Acquisition acquisition, Supplier<? extends Mono<T>> work);

	/**
	 * Runs {@code work} holding the lock on {@code key}, as {@link #holding} with
	 * {@link #acquire}: fails with {@link dev.distlock.LockAcquisitionException} if the
	 * lock was not acquired within the wait time, and never calls {@code work} then.
	 */
	default <T> Flux<T> execute(String key, LockOptions options, Supplier<? extends Publisher<T>> work) {
		return holding(lock(key, options), work);
	}

	/** {@link #execute(String, LockOptions, Supplier)} with the configured defaults. */
	default <T> Flux<T> execute(String key, Supplier<? extends Publisher<T>> work) {
		return execute(key, LockOptions.defaults(), work);
	}

	/**
	 * {@link #execute(String, LockOptions, Supplier)} for work that emits at most one
	 * value.
	 */
	default <T> Mono<T> executeMono(String key, LockOptions options, Supplier<? extends Mono<T>> work) {
		return holdingMono(lock(key, options), work);
	}

	/** Runs {@code work} holding the locks on every one of {@code keys}. */
	default <T> Flux<T> executeAll(Collection<String> keys, LockOptions options,
			Supplier<? extends Publisher<T>> work) {
		return holding(lockAll(keys, options), work);
	}

}
