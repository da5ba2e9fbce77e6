package dev.distlock.support;

import java.util.List;
import java.util.stream.Collectors;

import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Who is told that a {@link ManagedLease} was found lost, in order: the log, its holders
 * (interrupted with {@code on-lease-lost: interrupt}), this JVM's waiters for the key,
 * the callbacks of holders that are no thread, then the loss listener. A failing callback
 * or listener is logged and keeps the others from nothing.
 */
final class LossNotice {

	/** Under the lease's name, where operators look for its loss. */
	private static final Log logger = LogFactory.getLog(ManagedLease.class);

	private LossNotice() {
	}

	static void tell(ManagedLease lease, LockObserver.LossReason kind, String reason, List<Thread> holders,
			List<Runnable> callbacks, LeaseLossListener listener) {
		String key = lease.key();
		String names = holders.isEmpty() ? "no thread runs a scope of it"
				: "held by " + holders.stream().map((t) -> "'" + t.getName() + "'").collect(Collectors.joining(", "));
		logger.warn(
				"Lost the lease on lock '" + key + "' (fencing token " + lease.token() + ", " + names + "): " + reason);
		if (lease.onLeaseLost() == OnLeaseLost.INTERRUPT) {
			holders.forEach(Thread::interrupt);
		}
		lease.events().freed(key);
		for (Runnable callback : callbacks) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				logger.error("A loss callback failed for lock '" + key + "'", ex);
			}
		}
		@Nullable Thread first = holders.isEmpty() ? null : holders.get(0);
		try {
			listener.leaseLost(lease, kind, reason, first);
		}
		catch (RuntimeException ex) {
			logger.error("Lease loss listener failed for lock '" + key + "'", ex);
		}
	}

}
