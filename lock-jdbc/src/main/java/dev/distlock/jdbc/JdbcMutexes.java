package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.BatchRenewal.RenewalResults;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * Plain locks of the JDBC store, with their token blocks: the acquire, renew, release and
 * hand-over check statements of the lock table's rows ({@link JdbcLockDialect}), the
 * batch renewal of held leases, and the background undo of an acquisition that ended
 * without its result. Handles are {@link JdbcLockHandle}s, also for the keys of a
 * multi-key lock.
 */
final class JdbcMutexes {

	/** Leases renewed per statement. */
	static final int RENEW_BATCH = 500;

	private final JdbcLockProvider provider;

	private final JdbcCalls calls;

	private final String tableName;

	private final DataSource listenerDataSource;

	private volatile @Nullable PostgresReleaseSignals signals;

	private final Lock signalsLock = new ReentrantLock();

	private volatile boolean closed;

	/** The calls to the database, for work that runs on their workers. */
	JdbcCalls calls() {
		return this.calls;
	}

	JdbcMutexes(JdbcLockProvider provider, JdbcCalls calls, DataSource listenerDataSource) {
		this.provider = provider;
		this.calls = calls;
		this.tableName = provider.tableName();
		this.listenerDataSource = listenerDataSource;
	}

	/**
	 * On PostgreSQL, {@code NOTIFY} on release over one listening connection, opened at
	 * the first call (see {@link PostgresReleaseSignals}); elsewhere none.
	 */
	ReleaseSignals releaseSignals() {
		String channel = this.provider.dialect().releaseChannel(this.tableName);
		if (channel == null) {
			return ReleaseSignals.NONE;
		}
		PostgresReleaseSignals current = this.signals;
		if (current != null) {
			return current;
		}
		this.signalsLock.lock();
		try {
			current = this.signals;
			if (current == null) {
				current = new PostgresReleaseSignals(this.listenerDataSource, channel);
				if (this.closed) {
					current.close();
				}
				this.signals = current;
			}
			return current;
		}
		finally {
			this.signalsLock.unlock();
		}
	}

	/** Keys that a waiter of this JVM listens for release of. */
	int subscribedKeys() {
		PostgresReleaseSignals current = this.signals;
		return (current != null) ? current.subscribedKeys() : 0;
	}

	/** Stops the release listener, and any opened later. */
	void close() {
		this.closed = true;
		PostgresReleaseSignals current = this.signals;
		if (current != null) {
			current.close();
		}
	}

	/** A handle of this store for a key taken by {@code owner}. */
	JdbcLockHandle handle(String key, String owner, long token, long fence) {
		return new JdbcLockHandle(this, key, owner, token, fence);
	}

	/**
	 * One statement takes a free or expired row (an update and then an insert for a key's
	 * first acquisition on MariaDB and MySQL); a busy answer costs one more, which reads
	 * the holder's remaining lease and, when {@code waiting}, marks the row so that its
	 * release is signalled.
	 * <p>
	 * The acquire moves the row's fence to the block's last token ({@code max(fence + 1,
	 * clock) + tokens - 1}), so a block costs no extra statement. The handle's renewals
	 * and release check that last token.
	 */
	LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens,
			JdbcLockDialect.Acquire[] outcome) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		JdbcLockProvider.checkKey(key);
		long leaseMicros = JdbcCalls.micros(leaseTime);
		String owner = this.provider.newOwner();
		// Past this, a lock the call may have taken has run out by itself.
		long undoUntil = System.nanoTime() + leaseTime.toNanos() + this.calls.timeout().toNanos();
		JdbcLockDialect.Acquire acquire = this.calls.call(key, "acquire lock '" + key + "'",
				(connection) -> this.provider.dialect(connection)
					.acquire(connection, this.tableName, key, owner, leaseMicros, waiting, tokens),
				(late) -> {
					if (late == null || late.acquired()) {
						undo(key, owner, undoUntil);
					}
				});
		outcome[0] = acquire;
		if (acquire.acquired()) {
			return new LockAttempt.Acquired(handle(key, owner, acquire.fence(), acquire.lastFence()));
		}
		return new LockAttempt.Busy(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(acquire.remainingMicros())));
	}

	/**
	 * An acquisition that ended without its result (its reply came late, or never, and
	 * its statement may have run) may have taken the lock for an owner nobody knows:
	 * freed by that owner, in the background, tried again until it succeeds or the lease
	 * it may have taken has run out ({@code untilNanos}).
	 */
	private void undo(String key, String owner, long untilNanos) {
		this.calls.backgroundUntil("undo an acquisition of lock '" + key + "' that ended without its result",
				(connection) -> this.provider.dialect(connection).undo(connection, this.tableName, key, owner),
				untilNanos);
	}

	boolean renew(JdbcLockHandle handle, Duration leaseTime) {
		JdbcLockDialect.Lease lease = new JdbcLockDialect.Lease(handle.key(), handle.owner, handle.fence,
				JdbcCalls.micros(leaseTime));
		return this.calls.call(handle.key(), "renew lock '" + handle.key() + "'",
				(connection) -> this.provider.dialect(connection).renew(connection, this.tableName, lease), null);
	}

	/**
	 * One statement, re-run on another connection when one turns out dead; a re-run that
	 * finds the row freed with the handle's fence counts as the release.
	 */
	JdbcLockDialect.Release release(JdbcLockHandle handle) {
		String key = handle.key();
		AtomicInteger runs = new AtomicInteger();
		return this.calls.call(key, "release lock '" + key + "'", (connection) -> {
			boolean rerun = runs.getAndIncrement() > 0;
			JdbcLockDialect known = this.provider.dialect(connection);
			JdbcLockDialect.Release outcome = known.release(connection, this.tableName, key, handle.owner, handle.fence,
					known.releaseChannel(this.tableName));
			if (outcome == JdbcLockDialect.Release.NOT_HELD && rerun) {
				return known.releasedAt(connection, this.tableName, key, handle.fence);
			}
			return outcome;
		}, null);
	}

	boolean stillHeld(JdbcLockHandle handle) {
		String key = handle.key();
		return this.calls.call(key, "check the owner of lock '" + key + "'",
				(connection) -> this.provider.dialect(connection)
					.held(connection, this.tableName, key, handle.owner, handle.fence),
				null);
	}

	/**
	 * One statement per {@value #RENEW_BATCH} leases; a failed statement fails the leases
	 * it carried only. Handles of other kinds (read holds) are renewed one by one.
	 */
	void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		List<LockHandle> plain = new ArrayList<>(handles.size());
		List<Duration> plainLeases = new ArrayList<>(handles.size());
		List<Integer> at = new ArrayList<>(handles.size());
		for (int i = 0; i < handles.size(); i++) {
			if (handles.get(i) instanceof JdbcLockHandle) {
				plain.add(handles.get(i));
				plainLeases.add(leaseTimes.get(i));
				at.add(i);
			}
			else {
				// A read hold: one transaction of its own.
				try {
					results.renewed(i, handles.get(i).renew(leaseTimes.get(i)));
				}
				catch (LockBackendException ex) {
					results.failed(i, ex);
				}
			}
		}
		renewPlain(plain, plainLeases, new RenewalResults() {

			@Override
			public void renewed(int index, boolean renewed) {
				results.renewed(at.get(index), renewed);
			}

			@Override
			public void failed(int index, RuntimeException failure) {
				results.failed(at.get(index), failure);
			}

		});
	}

	private void renewPlain(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		for (int from = 0; from < handles.size(); from += RENEW_BATCH) {
			int to = Math.min(handles.size(), from + RENEW_BATCH);
			List<JdbcLockDialect.Lease> leases = new ArrayList<>(to - from);
			for (int i = from; i < to; i++) {
				JdbcLockHandle handle = (JdbcLockHandle) handles.get(i);
				leases.add(new JdbcLockDialect.Lease(handle.key(), handle.owner, handle.fence,
						JdbcCalls.micros(leaseTimes.get(i))));
			}
			boolean[] renewed;
			try {
				renewed = this.calls.call(leases.get(0).key(),
						"renew " + leases.size() + " locks incl. '" + leases.get(0).key() + "'",
						(connection) -> this.provider.dialect(connection).renewAll(connection, this.tableName, leases),
						null);
			}
			catch (LockBackendException ex) {
				for (int i = from; i < to; i++) {
					results.failed(i, ex);
				}
				continue;
			}
			for (int i = from; i < to; i++) {
				results.renewed(i, renewed[i - from]);
			}
		}
	}

	/**
	 * Deletes the lock table's rows whose lease ran out more than {@code idleMicros} ago.
	 * @return the number of rows deleted
	 */
	int sweep(long idleMicros) {
		return this.calls.call("", "sweep idle rows of the lock table '" + this.tableName + "'",
				(connection) -> this.provider.dialect(connection).sweep(connection, this.tableName, idleMicros), null);
	}

}
