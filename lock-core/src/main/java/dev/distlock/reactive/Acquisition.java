package dev.distlock.reactive;

import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.support.ContextLocking;
import org.jspecify.annotations.Nullable;

/**
 * A described acquisition, for {@link ReactiveLockTemplate#holding}: what to take (one
 * key, or several all at once) and what a wait that runs out does (fail with
 * {@link dev.distlock.LockAcquisitionException}, or, after {@link #orSkip()}, complete
 * empty). Describing takes nothing: each subscription to a pipeline built with it is an
 * acquisition of its own, started with the leases of the subscriber's context, so that a
 * key the pipeline already holds is re-entered. Get one from
 * {@link ReactiveLockTemplate#lock} or {@link ReactiveLockTemplate#lockAll}.
 */
public final class Acquisition {

	private final Function<List<Lease>, CompletableFuture<? extends Optional<? extends Lease>>> start;

	private final @Nullable Supplier<RuntimeException> notAcquired;

	private Acquisition(Function<List<Lease>, CompletableFuture<? extends Optional<? extends Lease>>> start,
			@Nullable Supplier<RuntimeException> notAcquired) {
		this.start = start;
		this.notAcquired = notAcquired;
	}

	/** The lock on {@code key}; a wait that runs out fails the pipeline. */
	static Acquisition of(ContextLocking locking, String key, LockOptions options) {
		return new Acquisition((scope) -> locking.acquire(scope, key, options),
				() -> locking.notAcquired(key, options));
	}

	/** The locks on all {@code keys}, all or none; a wait that runs out fails. */
	static Acquisition ofAll(ContextLocking locking, Collection<String> keys, LockOptions options) {
		List<String> copy = List.copyOf(keys);
		return new Acquisition((scope) -> locking.acquireAll(scope, copy, options),
				() -> locking.notAllAcquired(copy, options));
	}

	/**
	 * The same acquisition, completing empty instead of failing when the wait time runs
	 * out: the work is then never called.
	 */
	public Acquisition orSkip() {
		return new Acquisition(this.start, null);
	}

	@SuppressWarnings("unchecked")
	CompletableFuture<Optional<Lease>> start(List<Lease> scope) {
		return (CompletableFuture<Optional<Lease>>) this.start.apply(scope);
	}

	/** The failure for a wait that ran out, or null to complete empty. */
	@Nullable RuntimeException notAcquired() {
		return (this.notAcquired != null) ? this.notAcquired.get() : null;
	}

}
