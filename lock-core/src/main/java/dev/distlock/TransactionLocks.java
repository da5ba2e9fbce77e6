package dev.distlock;

import java.time.Duration;
import java.util.OptionalLong;

/**
 * Locks held by the caller's own database transaction: taken inside an active
 * transaction, on that transaction's connection, and released only when it commits or
 * rolls back, never earlier. There is no lease: the lock cannot run out under a holder
 * that is still working, since the database holds it for as long as the transaction is
 * open, and frees it when the transaction ends, however it ends (commit, rollback, a
 * broken connection, a crashed holder).
 *
 * <p>
 * Meant for when the lock and the data it protects live in one database: the writes and
 * the lock commit together, so a second holder can only start after the first one's
 * writes are committed, and no fencing check is needed for writes in that transaction.
 * The price: a database connection and an open transaction for the whole locked section.
 *
 * <p>
 * Guarantees:
 * <ul>
 * <li>mutual exclusion per key among all transactions on the database, across threads and
 * JVMs;</li>
 * <li>waiting is bounded by the wait time: a busy lock ends the wait with
 * {@link LockAcquisitionException} (or an empty result), leaving the transaction
 * usable;</li>
 * <li>re-entrant within one transaction: locking a key the transaction already holds
 * returns at once, with the same fencing token;</li>
 * <li>refused outside a transaction with {@link IllegalStateException} naming the
 * key.</li>
 * </ul>
 *
 * <p>
 * These locks are a namespace of their own: a transaction lock and a
 * {@link DistributedLock} lease lock of the same key are unrelated. See
 * {@link TransactionLock} for the annotation.
 */
public interface TransactionLocks {

	/**
	 * Locks {@code key} in the current transaction, waiting up to the configured wait
	 * time.
	 * @return the fencing token, greater than every token handed out earlier for the key
	 * by a transaction that committed
	 * @throws LockAcquisitionException if the lock is still held by another transaction
	 * when the wait time is over, or if the thread was interrupted
	 * @throws IllegalStateException if no transaction is active on the lock store's
	 * {@code DataSource}
	 * @throws LockBackendException if the database failed
	 */
	long lock(String key);

	/**
	 * As {@link #lock(String)}, waiting up to {@code waitTime} (zero: try once).
	 */
	long lock(String key, Duration waitTime);

	/**
	 * As {@link #lock(String, Duration)}, but empty when the lock is still held by
	 * another transaction once {@code waitTime} is over.
	 * @throws LockAcquisitionException if the thread was interrupted
	 */
	OptionalLong tryLock(String key, Duration waitTime);

}
