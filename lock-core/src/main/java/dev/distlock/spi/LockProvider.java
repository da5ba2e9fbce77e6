package dev.distlock.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * A lock store, at its smallest: one attempt at a lock, described by a
 * {@link LockRequest}, which returns a {@link LockHandle} that renews and releases it. It
 * never waits for the lock, and knows nothing of Spring, threads or reentrancy; waiting,
 * renewal scheduling, re-entry and loss detection are built on top of it in
 * {@code dev.distlock.support}.
 *
 * <p>
 * A store says which kinds of hold it offers as data ({@link #kinds()}); a request of
 * another kind is refused before it reaches the store, and an option that needs one fails
 * at startup, with {@link #unsupportedReason} naming the store and the kind. What a store
 * can do beyond taking locks, it says by implementing a small capability interface:
 * {@link ReleaseSignalling} (waiters are woken by releases instead of polling),
 * {@link BatchRenewal} (many leases renewed per round trip), {@link BatchRelease},
 * {@link LocalHandover} (token blocks). A store that keeps countdown latches gives them
 * as a {@link LatchStore} ({@link #latches()}).
 *
 * <p>
 * Implementations must be thread-safe, give every attempt a fresh owner identity (so that
 * no handle can delete or renew another acquisition's lock), wrap store failures in
 * {@link dev.distlock.LockBackendException}, and return from every call within
 * {@link #callTimeout()}.
 */
public interface LockProvider {

	/**
	 * Tries once to take what {@code request} asks for. Never waits for the lock: a busy
	 * lock is an answer. The answer may come later than the call returns (a store whose
	 * client is asynchronous completes it from the client's thread); a store failure
	 * fails it with {@link dev.distlock.LockBackendException}, within
	 * {@link #callTimeout()}, and a request of a kind missing from {@link #kinds()} with
	 * {@link UnsupportedOperationException} ({@link Capabilities#unsupported}). A store
	 * that answers on the calling thread may also throw either instead.
	 *
	 * <p>
	 * For a waiting writer or a fair waiter ({@link LockRequest#waiterId()}), running the
	 * same attempt twice (a client that re-sends a command whose reply was lost) must not
	 * lose the lock it took.
	 * @return {@link LockAttempt.Acquired} with a handle ({@link LockAttempt.AcquiredAll}
	 * with one per key for {@link LockKind#MULTI}), or {@link LockAttempt.Busy} with the
	 * holder's remaining lease as a hint for when to retry
	 */
	CompletionStage<LockAttempt> tryLock(LockRequest request);

	/**
	 * The kinds of hold this store offers, as it is configured. The default, for the
	 * smallest store: exclusive locks only.
	 */
	default Set<LockKind> kinds() {
		return LockKind.EXCLUSIVE_ONLY;
	}

	/**
	 * Why this store does not offer {@code kind}, as a sentence naming the store and what
	 * it lacks (a setting, say); asked only for a kind missing from {@link #kinds()}.
	 */
	default String unsupportedReason(LockKind kind) {
		return kind.missingFrom(storeName());
	}

	/**
	 * The countdown latches this store keeps, if it keeps any.
	 */
	default Optional<LatchStore> latches() {
		return Optional.empty();
	}

	/**
	 * The waiter that made {@code request} gives up: a fair waiter leaves the queue at
	 * once, waking the next one; a waiting writer's intent ends at once, and readers held
	 * back by it only are signalled. Asked only for a request that
	 * {@link LockRequest#keepsPlace() keeps a place}; a place not given up lapses after
	 * the request's queue timeout anyway.
	 */
	default void withdraw(LockRequest request) {
	}

	/**
	 * Where the waiting machinery makes this store's attempts for callers that hold no
	 * thread while they wait (the asynchronous, reactive and coroutine APIs), so that a
	 * store call that blocks never holds one of the machinery's threads. A store whose
	 * {@link #tryLock} returns without waiting for the store, completing its answer from
	 * its client's own threads, gives none (the default): its attempts are made where the
	 * wait runs. A store whose calls block (JDBC statements, a synchronous client) gives
	 * an executor of its own ({@link CallThreads}). A blocking caller's attempts always
	 * run on the caller's own thread.
	 */
	default Optional<Executor> callExecutor() {
		return Optional.empty();
	}

	/**
	 * The longest any one call of this provider (or of its handles) may take: every
	 * attempt, renewal and release returns, or throws
	 * {@link dev.distlock.LockBackendException}, within it, whatever the timeouts of the
	 * client library underneath. The waiting machinery relies on it: a caller waits at
	 * most its wait time plus this bound.
	 */
	default Duration callTimeout() {
		return Duration.ofSeconds(30);
	}

	/**
	 * The store's name as users configure it ({@code redis}, {@code in-memory}), for
	 * messages.
	 */
	default String storeName() {
		return getClass().getSimpleName();
	}

}
