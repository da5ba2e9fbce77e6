package dev.distlock.jdbc;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.ReleaseSignals;

/**
 * PostgreSQL signals of one kind of release (freed permits, opened latches) on a channel
 * of their own beside the lock table's ({@code distlock_
 *
<table>
 * } and a suffix), so that a lock, a semaphore and a latch of the same key never wake
 * each other's waiters. Created at the first wait, as the lock's listener is; elsewhere
 * there are none.
 */
final class LazySignals implements AutoCloseable {

	private final DataSource dataSource;

	private final Supplier<JdbcLockDialect> dialect;

	private final String table;

	private final String suffix;

	private final AtomicReference<PostgresReleaseSignals> signals = new AtomicReference<>();

	private volatile boolean closed;

	LazySignals(DataSource dataSource, Supplier<JdbcLockDialect> dialect, String table, String suffix) {
		this.dataSource = dataSource;
		this.dialect = dialect;
		this.table = table;
		this.suffix = suffix;
	}

	/** The channel, or null on a database without signals. */
	String channel(JdbcLockDialect dialect) {
		String channel = dialect.releaseChannel(this.table);
		return (channel != null) ? channel + this.suffix : null;
	}

	/** The signals, or {@link ReleaseSignals#NONE} on a database without any. */
	ReleaseSignals get() {
		String channel = channel(this.dialect.get());
		if (channel == null) {
			return ReleaseSignals.NONE;
		}
		PostgresReleaseSignals current = this.signals.get();
		if (current == null) {
			// A listener starts only at its first subscription: the loser of a race costs
			// nothing.
			this.signals.compareAndSet(null, new PostgresReleaseSignals(this.dataSource, channel));
			current = this.signals.get();
			if (this.closed) {
				current.close();
			}
		}
		return current;
	}

	/** Keys that a waiter of this JVM listens for. */
	int subscribedKeys() {
		PostgresReleaseSignals current = this.signals.get();
		return (current != null) ? current.subscribedKeys() : 0;
	}

	@Override
	public void close() {
		this.closed = true;
		PostgresReleaseSignals current = this.signals.get();
		if (current != null) {
			current.close();
		}
	}

}
