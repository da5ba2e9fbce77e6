package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.LockBackendException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.jspecify.annotations.Nullable;

/**
 * The session as the lease of every lock this provider holds: follows Curator's
 * connection states and tells the held locks of their loss as soon as it is known or can
 * no longer be ruled out.
 *
 * <ul>
 * <li>{@code LOST} (the session expired, or Curator gave it up after a suspension as long
 * as the session timeout): every lock of the session is lost at once.</li>
 * <li>{@code SUSPENDED} (the connection dropped; the session may still live): the locks
 * stay held for a third of the negotiated session timeout, less a drift margin, and are
 * then lost unless the connection came back first. The client notices a silent connection
 * two thirds of the session timeout after it last heard from the server, so the server
 * cannot have expired the session before then.</li>
 * <li>{@code RECONNECTED} with the same session: nothing was lost. With another session
 * (the old one expired while disconnected): every lock of the old one is lost.</li>
 * </ul>
 * No lock is granted while the connection is not up, and none to a node that belongs to
 * another session than the current one.
 */
final class SessionGuard implements ConnectionStateListener {

	private static final Log logger = LogFactory.getLog(SessionGuard.class);

	/** The least time between two "cannot be reached yet" warnings. */
	static final Duration UNREACHABLE_WARNING_INTERVAL = Duration.ofSeconds(30);

	private final CuratorFramework client;

	private final ScheduledExecutorService timers;

	private final Set<ZookeeperLockHandle> held = ConcurrentHashMap.newKeySet();

	private volatile long sessionId;

	private volatile boolean connected;

	/** Notified whenever the connection comes back. */
	private final ReentrantLock connection = new ReentrantLock();

	/** Signalled whenever a session is (re)established. */
	private final Condition reconnected = this.connection.newCondition();

	private final ReentrantLock warning = new ReentrantLock();

	private volatile @Nullable ScheduledFuture<?> doubt;

	/** Warns while no session was ever established; cancelled by the first. */
	private volatile @Nullable ScheduledFuture<?> unreachable;

	/** When the last "cannot be reached yet" warning went out; guarded by this guard. */
	private long warnedAtNanos;

	private boolean warned;

	SessionGuard(CuratorFramework client, ScheduledExecutorService timers) {
		this.client = client;
		this.timers = timers;
	}

	/**
	 * Starts following the connection. While no session has been established, a warning
	 * goes out once Curator's connection timeout has passed, and then at most every
	 * {@link #UNREACHABLE_WARNING_INTERVAL}.
	 */
	void start() {
		this.client.getConnectionStateListenable().addListener(this);
		if (this.client.getZookeeperClient().isConnected()) {
			this.sessionId = readSessionId();
			this.connected = this.sessionId != 0;
		}
		if (this.sessionId == 0) {
			long first = Math.max(1, this.client.getZookeeperClient().getConnectionTimeoutMs());
			this.unreachable = this.timers.scheduleWithFixedDelay(() -> {
				if (this.sessionId == 0) {
					warnUnreachable();
				}
			}, first, UNREACHABLE_WARNING_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
			if (this.sessionId != 0) {
				// connected while the warning was being scheduled
				cancelUnreachable();
			}
		}
	}

	void stop() {
		this.client.getConnectionStateListenable().removeListener(this);
		cancelDoubt();
		cancelUnreachable();
	}

	/**
	 * The current session, for a renewal: never waits.
	 * @throws LockBackendException while the connection is not up
	 */
	long current(String key, String operation) {
		long session = this.sessionId;
		if (!this.connected || session == 0) {
			throw notConnected(key, operation);
		}
		return session;
	}

	/**
	 * The current session, for an attempt: while the connection is down (a server failed
	 * over, say), waits until {@code deadlineNanos} for it to come back.
	 * @throws LockBackendException if it does not come back in time
	 */
	long current(String key, String operation, long deadlineNanos) {
		this.connection.lock();
		try {
			long left;
			while ((!this.connected || this.sessionId == 0) && (left = deadlineNanos - System.nanoTime()) > 0) {
				try {
					this.reconnected.awaitNanos(left);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new LockBackendException(key, "Interrupted while waiting for the connection to ZooKeeper"
							+ " to " + operation + " lock '" + key + "'", ex);
				}
			}
		}
		finally {
			this.connection.unlock();
		}
		return current(key, operation);
	}

	private LockBackendException notConnected(String key, String operation) {
		if (this.sessionId == 0) {
			warnUnreachable();
			return new LockBackendException(key,
					"Cannot " + operation + " lock '" + key + "': ZooKeeper at " + connectString()
							+ " cannot be reached yet (no session has been established)",
					new IllegalStateException("no session with ZooKeeper at " + connectString()));
		}
		return new LockBackendException(key,
				"Cannot " + operation + " lock '" + key
						+ "': not connected to ZooKeeper (the session is in doubt or lost)",
				new IllegalStateException(
						"not connected to ZooKeeper at " + connectString() + " within the store timeout"));
	}

	/**
	 * Warns that ZooKeeper cannot be reached yet: the first time, then at most once per
	 * {@link #UNREACHABLE_WARNING_INTERVAL}, whatever the number of failed calls (the
	 * ZooKeeper client itself logs every connection attempt).
	 */
	private void warnUnreachable() {
		this.warning.lock();
		try {
			long now = System.nanoTime();
			if (this.warned && now - this.warnedAtNanos < UNREACHABLE_WARNING_INTERVAL.toNanos()) {
				return;
			}
			this.warned = true;
			this.warnedAtNanos = now;
		}
		finally {
			this.warning.unlock();
		}
		logger.warn("ZooKeeper at " + connectString() + " cannot be reached yet: no session has been established,"
				+ " so lock calls fail until it is (told again at most every "
				+ UNREACHABLE_WARNING_INTERVAL.toSeconds() + " s while this lasts)");
	}

	private String connectString() {
		try {
			return this.client.getZookeeperClient().getCurrentConnectionString();
		}
		catch (RuntimeException ex) {
			return "(connect string unknown)";
		}
	}

	/**
	 * The session the client last had, whether or not the connection is up now (0 before
	 * the first).
	 */
	long lastSessionId() {
		return this.sessionId;
	}

	/** Whether the connection is up now. */
	boolean isConnected() {
		return this.connected;
	}

	/**
	 * A lock was granted on a node of {@code session}; it is lost at once if that session
	 * ended meanwhile.
	 */
	void track(ZookeeperLockHandle handle) {
		this.held.add(handle);
		if (!this.connected || this.sessionId != handle.sessionId()) {
			handle.lost("the ZooKeeper session " + Long.toHexString(handle.sessionId()) + " ended while the lock was"
					+ " being granted");
		}
	}

	void untrack(ZookeeperLockHandle handle) {
		this.held.remove(handle);
	}

	@Override
	public void stateChanged(CuratorFramework client, ConnectionState newState) {
		switch (newState) {
			case CONNECTED, RECONNECTED -> {
				cancelDoubt();
				cancelUnreachable();
				long session = readSessionId();
				long previous = this.sessionId;
				this.sessionId = session;
				this.connected = session != 0;
				this.connection.lock();
				try {
					this.reconnected.signalAll();
				}
				finally {
					this.connection.unlock();
				}
				if (previous == 0 && session != 0 && hasWarned()) {
					logger.info("ZooKeeper at " + connectString() + " reached: session " + Long.toHexString(session));
				}
				if (previous != 0 && previous != session) {
					loseAll("the ZooKeeper session " + Long.toHexString(previous) + " ended (the client reconnected"
							+ " with session " + Long.toHexString(session) + ")", previous);
				}
			}
			case SUSPENDED, READ_ONLY -> {
				this.connected = false;
				suspended();
			}
			case LOST -> {
				this.connected = false;
				cancelDoubt();
				loseAll("the ZooKeeper session " + Long.toHexString(this.sessionId)
						+ " was lost (expired, or suspended for as long as the session timeout)", this.sessionId);
			}
		}
	}

	private void suspended() {
		long timeoutMillis = negotiatedSessionTimeout();
		long graceMillis = graceMillis(timeoutMillis);
		long session = this.sessionId;
		cancelDoubt();
		this.doubt = this.timers.schedule(() -> {
			if (!this.connected) {
				loseAll(doubtReason(timeoutMillis, session), session);
			}
		}, graceMillis, TimeUnit.MILLISECONDS);
	}

	/**
	 * How long the locks stay held once the connection is suspended: a third of the
	 * session timeout, less the drift margin.
	 */
	static long graceMillis(long timeoutMillis) {
		return Math.max(0, timeoutMillis / 3 - driftMarginMillis(timeoutMillis));
	}

	/** What the client's and the server's clocks may drift apart: 1% and 2 ms. */
	static long driftMarginMillis(long timeoutMillis) {
		return timeoutMillis / 100 + 2;
	}

	/** Why the locks of {@code session} are lost after a suspension of the grace. */
	static String doubtReason(long timeoutMillis, long session) {
		return "the connection to ZooKeeper has been suspended for " + graceMillis(timeoutMillis)
				+ "ms (a third of the " + timeoutMillis + "ms session timeout, " + timeoutMillis / 3 + "ms, less "
				+ driftMarginMillis(timeoutMillis)
				+ "ms for clock drift); the client may have heard nothing from the server for two thirds of the"
				+ " session timeout before it noticed, so the server may have expired session "
				+ Long.toHexString(session);
	}

	private boolean hasWarned() {
		this.warning.lock();
		try {
			return this.warned;
		}
		finally {
			this.warning.unlock();
		}
	}

	private void cancelUnreachable() {
		ScheduledFuture<?> pending = this.unreachable;
		this.unreachable = null;
		if (pending != null) {
			pending.cancel(false);
		}
	}

	private void cancelDoubt() {
		ScheduledFuture<?> pending = this.doubt;
		this.doubt = null;
		if (pending != null) {
			pending.cancel(false);
		}
	}

	private void loseAll(String reason, long session) {
		for (ZookeeperLockHandle handle : this.held) {
			if (handle.sessionId() == session) {
				handle.lost(reason);
			}
		}
	}

	private long readSessionId() {
		try {
			return this.client.getZookeeperClient().getZooKeeper().getSessionId();
		}
		catch (Exception ex) {
			logger.debug("Could not read the ZooKeeper session id", ex);
			return 0;
		}
	}

	private long negotiatedSessionTimeout() {
		return this.client.getZookeeperClient().getLastNegotiatedSessionTimeoutMs();
	}

}
