package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Signals on a database without {@code NOTIFY} (MariaDB, MySQL), for semaphores and
 * latches: while anybody in this JVM waits, one query per {@value #POLL_MILLIS} ms reads
 * the state of every key waited for (up to {@value #KEYS_PER_QUERY} per query: a latch's
 * generation and count, a semaphore's live permits), and the waiters of each key whose
 * state changed, or whose state says that what they wait for is there (a free permit: a
 * permit taken and freed between two polls leaves the state as it was), are woken.
 * Waiting costs the database that one query per interval, whatever the number of waiters,
 * and a release is seen within about an interval. A key counts as listened to from its
 * first poll on (which wakes its waiters once, so that nothing before it goes unnoticed)
 * while polls succeed; a poll that fails wakes nobody, and waiters fall back to their own
 * backoff until one succeeds again.
 */
final class PollingSignals implements ReleaseSignals, AutoCloseable {

	private static final Log logger = LogFactory.getLog(PollingSignals.class);

	static final long POLL_MILLIS = 100;

	static final int KEYS_PER_QUERY = 200;

	private final JdbcCalls calls;

	private final Reader reader;

	private final Predicate<Object> ready;

	private final Map<String, Set<Runnable>> subscribers = new ConcurrentHashMap<>();

	/** The state each key had at the last poll; empty for none. */
	private final Map<String, Optional<Object>> seen = new ConcurrentHashMap<>();

	private volatile boolean healthy;

	private final AtomicBoolean polling = new AtomicBoolean();

	private final AtomicReference<Future<?>> task = new AtomicReference<>();

	private volatile boolean closed;

	/**
	 * @param ready whether a key's state wakes its waiters even when unchanged since the
	 * last poll
	 */
	PollingSignals(JdbcCalls calls, Reader reader, Predicate<Object> ready) {
		this.calls = calls;
		this.reader = reader;
		this.ready = ready;
	}

	@Override
	public Subscription subscribe(String key, Runnable onChange) {
		this.subscribers.computeIfAbsent(key, (k) -> new CopyOnWriteArraySet<>()).add(onChange);
		start();
		return () -> this.subscribers.computeIfPresent(key, (k, set) -> {
			set.remove(onChange);
			return set.isEmpty() ? null : set;
		});
	}

	/** Keys that a waiter of this JVM waits for. */
	int subscribedKeys() {
		return this.subscribers.size();
	}

	@Override
	public boolean isListening() {
		return this.healthy;
	}

	@Override
	public boolean isListening(String key) {
		return this.healthy && this.seen.containsKey(key);
	}

	private void start() {
		if (this.task.get() != null || this.closed) {
			return;
		}
		try {
			Future<?> started = this.calls.scheduler()
				.scheduleWithFixedDelay(this::tick, POLL_MILLIS, POLL_MILLIS, TimeUnit.MILLISECONDS);
			if (!this.task.compareAndSet(null, started)) {
				started.cancel(false);
			}
		}
		catch (RejectedExecutionException ex) {
			// The provider is closed: waiters re-check at their retry interval.
		}
	}

	/**
	 * On the scheduler's thread, which must not block: the query runs in the background.
	 */
	private void tick() {
		if (this.subscribers.isEmpty()) {
			this.seen.clear();
			return;
		}
		if (this.polling.compareAndSet(false, true)) {
			try {
				this.calls.background(this::poll);
			}
			catch (RejectedExecutionException ex) {
				this.polling.set(false);
			}
		}
	}

	private void poll() {
		try {
			List<String> keys = List.copyOf(this.subscribers.keySet());
			this.seen.keySet().retainAll(keys);
			for (int from = 0; from < keys.size(); from += KEYS_PER_QUERY) {
				List<String> chunk = keys.subList(from, Math.min(keys.size(), from + KEYS_PER_QUERY));
				Map<String, ?> states = this.calls.call(chunk.get(0), "poll " + chunk.size() + " keys",
						(connection) -> this.reader.read(connection, chunk), null);
				this.healthy = true;
				for (String key : chunk) {
					Optional<Object> now = Optional.ofNullable(states.get(key));
					Optional<Object> before = this.seen.put(key, now);
					if (!now.equals(before) || now.filter(this.ready).isPresent()) {
						signal(key);
					}
				}
			}
		}
		catch (RuntimeException ex) {
			this.healthy = false;
			logger.debug("Could not poll for releases; waiters poll themselves until it works again", ex);
		}
		finally {
			this.polling.set(false);
		}
	}

	private void signal(String key) {
		Set<Runnable> waiting = this.subscribers.get(key);
		if (waiting == null) {
			return;
		}
		for (Runnable callback : waiting) {
			try {
				callback.run();
			}
			catch (RuntimeException ex) {
				logger.warn("Release signal subscriber failed", ex);
			}
		}
	}

	@Override
	public void close() {
		this.closed = true;
		Future<?> current = this.task.get();
		if (current != null) {
			current.cancel(false);
		}
	}

	/** Reads the states of the keys that have one (any value that equals its like). */
	@FunctionalInterface
	interface Reader {

		Map<String, ?> read(Connection connection, List<String> keys) throws SQLException;

	}

}
