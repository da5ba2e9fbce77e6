package dev.distlock.support;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import dev.distlock.LockBackendException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Releases that failed because the store could not be reached, tried again in the
 * background until one gets through or the lease would have ended anyway. Without this, a
 * lock whose release failed during an outage stays held in the store for the rest of its
 * lease after the store is back, and everyone waits for it as for a busy lock.
 *
 * <p>
 * The caller of the failed release has been told (its release threw); a retry that then
 * finds the lock gone (the lease ran out, or the failed call reached the store after all)
 * just ends, and one that gets through frees the lock for this JVM's waiters at once.
 * Retries are owner-checked like every release, so they never delete a lock of anyone
 * else's.
 *
 * <p>
 * One probe at a time per template: after a pause that starts at a few milliseconds and
 * doubles up to the retry interval (at most a second), the pending releases are tried in
 * turn until one fails again. So a store that is still down gets one call at a time from
 * here, and once it answers, every pending release goes through in that round. The pauses
 * run on the renewal scheduler's collecting thread, the calls on the template's clean-up
 * threads: no thread of its own.
 */
final class PendingReleases {

	private static final Log logger = LogFactory.getLog(PendingReleases.class);

	private static final long MAX_PAUSE_NANOS = Duration.ofSeconds(1).toNanos();

	private final RenewalScheduler scheduler;

	private final Executor executor;

	private final Consumer<String> freed;

	private final long maxPauseNanos;

	/** The failed releases, each with the failure its holder was told of. */
	private final Map<ManagedLease, LockBackendException> pending = new ConcurrentHashMap<>();

	/** Guards the fields below. */
	private final ReentrantLock lock = new ReentrantLock();

	/** A probe is scheduled or running. */
	private boolean probing;

	private Backoff backoff;

	private RenewalScheduler.@Nullable DeadlineCheck next;

	private boolean closed;

	/**
	 * @param executor runs the retries (they wait for the store)
	 * @param freed told of each key a retry freed, so that waiters of this JVM try again
	 * @param retryInterval the longest pause between two probes (at most a second)
	 */
	PendingReleases(RenewalScheduler scheduler, Executor executor, Consumer<String> freed, Duration retryInterval) {
		this.scheduler = scheduler;
		this.executor = executor;
		this.freed = freed;
		this.maxPauseNanos = Math.max(1, Math.min(MAX_PAUSE_NANOS, retryInterval.toNanos()));
		this.backoff = new Backoff(this.maxPauseNanos);
	}

	/**
	 * The release of {@code lease} failed with {@code failure}: tried again until it gets
	 * through, unless the lease would end before.
	 */
	void add(ManagedLease lease, LockBackendException failure) {
		if (lease.nanosToDeadline() <= 0) {
			return;
		}
		this.lock.lock();
		try {
			if (this.closed) {
				return;
			}
			this.pending.put(lease, failure);
			if (!this.probing) {
				this.probing = true;
				this.backoff = new Backoff(this.maxPauseNanos);
				scheduleProbe();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * The failure of a release of {@code key} still being retried, if there is one: the
	 * store may hold the lock until that release gets through.
	 */
	@Nullable LockBackendException pendingFor(String key) {
		for (Map.Entry<ManagedLease, LockBackendException> entry : this.pending.entrySet()) {
			if (entry.getKey().key().equals(key) && entry.getKey().nanosToDeadline() > 0) {
				return entry.getValue();
			}
		}
		return null;
	}

	/** Releases still being retried. */
	int size() {
		return this.pending.size();
	}

	/** Called holding {@link #lock}. */
	private void scheduleProbe() {
		this.next = this.scheduler.scheduleTask(this::dispatch, this.backoff.nextPauseNanos());
	}

	/** On the scheduler's collecting thread, which must not wait for the store. */
	private void dispatch() {
		try {
			this.executor.execute(this::probe);
		}
		catch (RejectedExecutionException ex) {
			// The template is closed: its close made the last attempt.
			this.lock.lock();
			try {
				this.probing = false;
			}
			finally {
				this.lock.unlock();
			}
		}
	}

	private void probe() {
		boolean unreachable = tryEach();
		this.lock.lock();
		try {
			if (this.closed || this.pending.isEmpty()) {
				this.probing = false;
				this.next = null;
				return;
			}
			if (!unreachable) {
				// Added while this round ran: the store answers, so go soon.
				this.backoff = new Backoff(this.maxPauseNanos);
			}
			scheduleProbe();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Tries the pending releases in turn, until one fails as the store still cannot be
	 * reached.
	 * @return whether one did
	 */
	private boolean tryEach() {
		for (ManagedLease lease : this.pending.keySet()) {
			if (lease.nanosToDeadline() <= 0) {
				// The lease ends in the store by itself.
				this.pending.remove(lease);
				continue;
			}
			try {
				boolean released = lease.retryRelease();
				this.pending.remove(lease);
				this.freed.accept(lease.key());
				if (released) {
					logger.info("Released lock '" + lease.key() + "' whose release had failed while the store"
							+ " could not be reached");
				}
			}
			catch (LockBackendException ex) {
				logger.debug("Release of lock '" + lease.key() + "' failed again; retrying", ex);
				return true;
			}
			catch (RuntimeException ex) {
				this.pending.remove(lease);
				logger.warn("Gave up releasing lock '" + lease.key() + "' again; it expires after its lease", ex);
			}
		}
		return false;
	}

	/**
	 * At shutdown: no more probes; each pending release is tried once more, until one
	 * fails as the store still cannot be reached. Those left expire after their lease.
	 */
	void close() {
		this.lock.lock();
		try {
			this.closed = true;
			RenewalScheduler.DeadlineCheck scheduled = this.next;
			if (scheduled != null) {
				this.scheduler.cancel(scheduled);
			}
			this.probing = false;
		}
		finally {
			this.lock.unlock();
		}
		if (tryEach()) {
			this.pending.keySet()
				.forEach((lease) -> logger.warn("Could not release lock '" + lease.key()
						+ "' at shutdown after its release had failed; it expires after its lease"));
		}
		this.pending.clear();
	}

}
