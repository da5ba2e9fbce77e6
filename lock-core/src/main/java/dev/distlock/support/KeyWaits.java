package dev.distlock.support;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import dev.distlock.Lease;
import dev.distlock.MultiLease;
import org.jspecify.annotations.Nullable;

/**
 * The waits of a template's callers, once re-entry is ruled out and the key and kind are
 * checked: a blocking wait runs its steps on the caller's thread, a shared one on the
 * template's wait workers, both through the key's local line ({@link LineTurn}).
 */
final class KeyWaits {

	private final WaitLoop loop;

	private final LocalLines lines;

	private final LockRequests requests;

	private final SharedWaitDriver shared;

	/** The store's bound on one call. */
	private final long callTimeoutNanos;

	KeyWaits(WaitLoop loop, LocalLines lines, LockRequests requests, SharedWaitDriver shared, long callTimeoutNanos) {
		this.loop = loop;
		this.lines = lines;
		this.requests = requests;
		this.shared = shared;
		this.callTimeoutNanos = callTimeoutNanos;
	}

	/**
	 * The blocking wait: the caller's own thread runs its wait's steps
	 * ({@link CallerThread}); an interrupt ends it, as the caller gives up.
	 */
	@Nullable ManagedLease blocking(String key, LockSettings settings) {
		CallerThread caller = new CallerThread();
		LineTurn turn = new LineTurn(this.loop, this.lines, this.requests.of(key, settings), settings, caller,
				this.callTimeoutNanos)
			.start();
		return caller.await(turn.result, () -> turn.stop(WaitLoop.interrupted(key, settings, null)));
	}

	/**
	 * A wait that holds no thread, told to the observer as {@code acquisition}.
	 * Cancelling the answer gives up the wait.
	 */
	CompletableFuture<Optional<Lease>> shared(String key, LockSettings settings, LockObserver.Acquisition acquisition,
			boolean withoutWaiting, boolean grantWhereAnswered) {
		WaitDriver driver = grantWhereAnswered ? this.shared.grantingWhereAnswered() : this.shared;
		LineTurn turn = new LineTurn(this.loop, this.lines, this.requests.of(key, settings), settings, driver,
				this.callTimeoutNanos);
		if (withoutWaiting) {
			turn.startWithoutWaiting();
		}
		else {
			turn.start();
		}
		boolean tryOnly = settings.waitTime().isZero();
		CompletableFuture<Optional<Lease>> answer = turn.result
			.handle((lease, failure) -> Optional.ofNullable(Observations.ended(acquisition, lease, failure, tryOnly)));
		answer.whenComplete((lease, failure) -> {
			if (failure instanceof CancellationException cancelled) {
				turn.cancel(cancelled);
				CompositeLockObserver
					.safely(() -> acquisition.notAcquired(LockObserver.AcquireOutcome.INTERRUPTED, cancelled));
			}
		});
		return answer;
	}

	/**
	 * A multi-key wait that holds no thread, for keys (sorted and checked) re-entered as
	 * {@code reentrant} says. Cancelling the answer gives up the wait.
	 */
	CompletableFuture<Optional<MultiLease>> sharedAll(MultiKeyAcquirer acquirer, List<String> sorted,
			LockSettings settings, Function<String, @Nullable ManagedLease> reentrant) {
		MultiKeyWait wait = acquirer.start(sorted, settings, this.shared, reentrant);
		CompletableFuture<Optional<MultiLease>> answer = wait.result.thenApply(Optional::ofNullable);
		answer.whenComplete((lease, failure) -> {
			if (failure instanceof CancellationException cancelled) {
				wait.cancel(cancelled);
			}
		});
		return answer;
	}

}
