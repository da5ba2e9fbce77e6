package dev.distlock.support;

import dev.distlock.LeaseLostException;
import dev.distlock.OnLeaseLost;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.core.Ordered;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * Holds a lease until the surrounding transaction completes. Only touched when spring-tx
 * is on the class path.
 *
 * <p>
 * Before the transaction commits, the lease is checked once more: a lease already lost
 * then fails the commit (the transaction rolls back), since another holder may be working
 * on the same data. That check narrows the window but cannot close it: the lease can
 * still run out between the check and the commit, which only a fenced write can catch.
 */
final class TransactionBoundRelease {

	private static final Log logger = LogFactory.getLog(TransactionBoundRelease.class);

	private static final boolean TX_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			TransactionBoundRelease.class.getClassLoader());

	private TransactionBoundRelease() {
	}

	static boolean transactionActive() {
		return TX_PRESENT && TransactionSynchronizationManager.isSynchronizationActive();
	}

	/**
	 * Registers the release with the current transaction.
	 * @throws LeaseLostException at once if the lease is already lost, so that the
	 * transaction rolls back
	 */
	static void releaseAfterCompletion(ManagedLease lease) {
		if (!lease.isHeld()) {
			lease.release();
			return;
		}
		LeaseSynchronization.register(lease);
	}

	/**
	 * Every use of spring-tx's synchronization types is in here: the verifier of this
	 * outer class must not need them, or a store without spring-tx on its class path
	 * fails on its first release ({@code NoClassDefFoundError}).
	 */
	private static final class LeaseSynchronization implements TransactionSynchronization {

		static void register(ManagedLease lease) {
			TransactionSynchronizationManager.registerSynchronization(new LeaseSynchronization(lease));
		}

		private final ManagedLease lease;

		LeaseSynchronization(ManagedLease lease) {
			this.lease = lease;
		}

		@Override
		public int getOrder() {
			return Ordered.LOWEST_PRECEDENCE;
		}

		@Override
		public void beforeCommit(boolean readOnly) {
			if (!this.lease.isHeld() && this.lease.onLeaseLost() != OnLeaseLost.LOG) {
				throw new LeaseLostException(this.lease.key(),
						"Lease on lock '" + this.lease.key() + "' (fencing token " + this.lease.fencingToken()
								+ ") was lost before the transaction committed; rolling it back");
			}
		}

		@Override
		public void afterCompletion(int status) {
			try {
				this.lease.release();
			}
			catch (LeaseLostException ex) {
				logger.warn("Lock '" + this.lease.key() + "' was lost before its transaction completed ("
						+ ((status == STATUS_COMMITTED) ? "committed" : "not committed") + ")", ex);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release lock '" + this.lease.key() + "' after its transaction completed;"
						+ " it expires when its lease runs out", ex);
			}
		}

	}

}
