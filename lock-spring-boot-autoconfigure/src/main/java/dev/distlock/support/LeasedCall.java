package dev.distlock.support;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Runs a body while holding a lease and releases the lease on every path: the body's own exception reaches
 * the caller unchanged (a release failure is added to it as suppressed); a lease lost while the body ran is
 * thrown after it returns. The lease is {@link LockContext#current()} while the body runs.
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

	public static <T, E extends Throwable> T call(Lease lease, Body<T, E> body) throws E {
		T result;
		try (LockContext.Scope scope = LockContext.open(lease)) {
			result = body.run();
		}
		catch (Throwable ex) {
			try {
				lease.release();
			}
			catch (RuntimeException releaseFailure) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		try {
			lease.release();
		}
		catch (LockBackendException ex) {
			// The work is done and renewal has stopped: the lock frees itself when its lease runs out.
			// Failing a completed call here would tell the caller it did not happen.
			logger.warn("Could not release lock '" + lease.key() + "'; it expires when its lease runs out", ex);
		}
		return result;
	}

}
