package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LossReporting;
import org.jspecify.annotations.Nullable;

/**
 * One acquisition: the ephemeral sequential node that was granted (a writer's that stood
 * first in the key's queue, a reader's with no writer's node before it, or a permit's),
 * owned by the session that created it.
 *
 * <p>
 * The lease is the shorter of two: the session (its end is reported at once, see
 * {@link SessionGuard}) and the lease time, which this JVM enforces by deleting the node
 * when the lease time passes without renewal. A renewal is a check in memory that the
 * connection is up and the session unchanged: the session's own heartbeat is what keeps
 * the node alive, so renewing costs no round trip unless the lease time changes (the node
 * records it, for others' {@code Busy} hints).
 */
final class ZookeeperLockHandle implements LossReporting {

	private enum State {

		HELD, EXPIRED, LOST, RELEASED

	}

	private final ZookeeperLockProvider provider;

	private final String key;

	private final String path;

	private final long czxid;

	private final long sessionId;

	/** Guards the state, the lease time, the expiry and the listener. */
	private final ReentrantLock guard = new ReentrantLock();

	private State state = State.HELD;

	private long leaseMillis;

	private @Nullable ScheduledFuture<?> expiry;

	private @Nullable Consumer<String> listener;

	private @Nullable String lostReason;

	ZookeeperLockHandle(ZookeeperLockProvider provider, String key, String path, long czxid, long sessionId,
			long leaseMillis) {
		this.provider = provider;
		this.key = key;
		this.path = path;
		this.czxid = czxid;
		this.sessionId = sessionId;
		this.leaseMillis = leaseMillis;
	}

	@Override
	public String key() {
		return this.key;
	}

	/**
	 * The node's {@code czxid}: the id of the transaction that created it, which rises
	 * with every write to the ensemble, across keys and sessions. (The sequence number in
	 * the node's name restarts when an idle key's parent is removed, so it is no token.)
	 */
	@Override
	public long fencingToken() {
		return this.czxid;
	}

	String path() {
		return this.path;
	}

	long sessionId() {
		return this.sessionId;
	}

	/** Starts the lease time; called once, before the handle is given out. */
	void startLease() {
		this.guard.lock();
		try {
			scheduleExpiry();
		}
		finally {
			this.guard.unlock();
		}
	}

	@Override
	public boolean renew(Duration leaseTime) {
		long millis = Math.max(1, leaseTime.toMillis());
		boolean record;
		this.guard.lock();
		try {
			if (this.state != State.HELD) {
				return false;
			}
			if (this.provider.session().current(this.key, "renew") != this.sessionId) {
				lost("the ZooKeeper session " + Long.toHexString(this.sessionId) + " ended");
				return false;
			}
			record = millis != this.leaseMillis;
		}
		finally {
			this.guard.unlock();
		}
		if (record && !this.provider.nodes().recordLease(this.key, this.path, millis)) {
			this.guard.lock();
			try {
				expired();
			}
			finally {
				this.guard.unlock();
			}
			return false;
		}
		this.guard.lock();
		try {
			if (this.state != State.HELD) {
				return false;
			}
			this.leaseMillis = millis;
			scheduleExpiry();
			return true;
		}
		finally {
			this.guard.unlock();
		}
	}

	@Override
	public boolean release() {
		Boolean settled = stopHolding();
		if (settled != null) {
			return settled;
		}
		boolean deleted;
		try {
			deleted = this.provider.nodes().delete(this.key, this.path, this.sessionId);
		}
		catch (LockBackendException ex) {
			return releaseFailed(ex);
		}
		this.provider.locks().released(this.key, this.path);
		return deleted;
	}

	/**
	 * {@link #release()} without blocking: the delete is sent at once and its answer
	 * completes the release on the client's event thread; only a delete whose first
	 * answer leaves its fate unknown is asked again, on {@code executor}.
	 */
	@Override
	public CompletionStage<Boolean> releaseAsync(Executor executor) {
		Boolean settled = stopHolding();
		if (settled != null) {
			return CompletableFuture.completedFuture(settled);
		}
		return this.provider.nodes()
			.deleteAsync(this.key, this.path, this.sessionId, executor)
			.handle((deleted, failure) -> {
				if (failure != null) {
					Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
					if (cause instanceof LockBackendException ex) {
						return releaseFailed(ex);
					}
					throw (failure instanceof CompletionException completion) ? completion
							: new CompletionException(failure);
				}
				this.provider.locks().released(this.key, this.path);
				return deleted;
			});
	}

	/**
	 * Marks the lock released; the answer of a release that needs no delete (released
	 * before, expired, lost or of an ended session), or null when the node is to be
	 * deleted.
	 */
	private @Nullable Boolean stopHolding() {
		State previous;
		this.guard.lock();
		try {
			previous = this.state;
			if (previous == State.RELEASED) {
				return false;
			}
			this.state = State.RELEASED;
			cancelExpiry();
		}
		finally {
			this.guard.unlock();
		}
		this.provider.session().untrack(this);
		if (previous == State.EXPIRED) {
			return false;
		}
		if (previous == State.LOST || this.provider.session().lastSessionId() != this.sessionId) {
			// The node goes with its session; deleting it now frees the key sooner.
			this.provider.nodes().deleteInBackground(this.path);
			return false;
		}
		return null;
	}

	private boolean releaseFailed(LockBackendException ex) {
		if (this.provider.nodes().movedOn(this.sessionId)) {
			// The node's session is over, whatever became of the delete: the node goes
			// with it, or went before this release, and the lock with it.
			return false;
		}
		throw ex;
	}

	@Override
	public void onLoss(Consumer<String> listener) {
		String reason;
		this.guard.lock();
		try {
			this.listener = listener;
			reason = (this.state == State.LOST) ? this.lostReason : null;
		}
		finally {
			this.guard.unlock();
		}
		if (reason != null) {
			this.provider.report(listener, reason);
		}
	}

	/** The session ended: the lock is lost at once, and the listener told. */
	void lost(String reason) {
		Consumer<String> told;
		this.guard.lock();
		try {
			if (this.state != State.HELD) {
				return;
			}
			this.state = State.LOST;
			this.lostReason = reason;
			cancelExpiry();
			told = this.listener;
		}
		finally {
			this.guard.unlock();
		}
		this.provider.session().untrack(this);
		if (told != null) {
			this.provider.report(told, reason);
		}
	}

	/** The lease time passed without renewal: the node is deleted, as a store expires. */
	private void expired() {
		if (this.state != State.HELD) {
			return;
		}
		this.state = State.EXPIRED;
		cancelExpiry();
		this.provider.session().untrack(this);
		this.provider.nodes().deleteInBackground(this.path);
	}

	private void scheduleExpiry() {
		cancelExpiry();
		this.expiry = this.provider.schedule(() -> {
			this.guard.lock();
			try {
				expired();
			}
			finally {
				this.guard.unlock();
			}
		}, this.leaseMillis);
	}

	private void cancelExpiry() {
		ScheduledFuture<?> pending = this.expiry;
		if (pending != null) {
			pending.cancel(false);
			this.expiry = null;
		}
	}

	@Override
	public String toString() {
		return "ZookeeperLock[key=" + this.key + ", node=" + this.path + ", token=" + this.czxid + "]";
	}

}
