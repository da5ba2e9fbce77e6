package dev.distlock.support;

import java.util.List;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockContext;
import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Runs a body while holding a lease and releases the lease on every path: the body's own
 * exception reaches the caller unchanged (a release failure is added to it as
 * suppressed); a lease lost while the body ran is thrown after it returns, unless the
 * lock's {@link OnLeaseLost} is {@code LOG}. The lease is {@link LockContext#current()}
 * while the body runs.
 *
 * <p>
 * Inside an active Spring transaction (an outer {@code @Transactional} or
 * {@code TransactionTemplate}), the outermost lease is released only once that
 * transaction has completed, and renewed until then: otherwise the next holder could read
 * what this one wrote before it was committed.
 */
public final class LeasedCall {

	private static final Log logger = LogFactory.getLog(LeasedCall.class);

	private LeasedCall() {
	}

	/** A body that may throw {@code E}. */
	@FunctionalInterface
	public interface Body<T, E extends Throwable> {

		T run() throws E;

	}

	/**
	 * Runs {@code callback} once {@code lease} (or, for a multi-key lease, any of its
	 * keys) is found lost, on the thread that finds it; at once if it already is. The
	 * callback must not block. A lease this library did not make is never reported.
	 * @return removes the callback
	 */
	public static Runnable whenLost(Lease lease, Runnable callback) {
		List<Lease> parts = (lease instanceof DefaultMultiLease multi) ? multi.parts() : List.of(lease);
		List<Runnable> removals = parts.stream()
			.map(DefaultMultiLease::managed)
			.filter((managed) -> managed != null)
			.map((managed) -> managed.whenLost(callback))
			.toList();
		return () -> removals.forEach(Runnable::run);
	}

	public static <T, E extends Throwable> T call(Lease lease, Body<T, E> body) throws E {
		T result;
		try (LockContext.Scope scope = LockContext.open(lease)) {
			result = body.run();
		}
		catch (Throwable ex) {
			try {
				exit(lease);
			}
			catch (LeaseLostException lost) {
				if (onLeaseLost(lease) != OnLeaseLost.LOG) {
					ex.addSuppressed(lost);
				}
			}
			catch (RuntimeException releaseFailure) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		try {
			exit(lease);
		}
		catch (LeaseLostException ex) {
			if (onLeaseLost(lease) != OnLeaseLost.LOG) {
				throw ex;
			}
			logger.debug("Lease lost while held; on-lease-lost is LOG, so the call completes", ex);
		}
		catch (LockBackendException ex) {
			// The work is done and renewal has stopped: the lock frees itself when its
			// lease runs out.
			// Failing a completed call here would tell the caller it did not happen.
			logger.warn("Could not release lock '" + lease.key() + "'; it expires when its lease runs out", ex);
		}
		return result;
	}

	private static void exit(Lease lease) {
		if (lease instanceof DefaultMultiLease multi && TransactionBoundRelease.transactionActive()
				&& multi.releaseAfterCommit()) {
			multi.releaseAfterCompletion();
			return;
		}
		if (lease instanceof ManagedLease managed && managed.releaseAfterCommit()
				&& TransactionBoundRelease.transactionActive()) {
			TransactionBoundRelease.releaseAfterCompletion(managed);
			return;
		}
		lease.release();
	}

	/** What the lock of {@code lease} does when the lease is lost while held. */
	public static OnLeaseLost onLeaseLost(Lease lease) {
		if (lease instanceof ManagedLease managed) {
			return managed.onLeaseLost();
		}
		if (lease instanceof NestedLease nested) {
			return nested.outer().onLeaseLost();
		}
		if (lease instanceof DefaultMultiLease multi) {
			return multi.onLeaseLost();
		}
		return OnLeaseLost.FAIL_ON_EXIT;
	}

}
