package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Queue;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The one scheduler that renews every held lease of an application, in batches: when the
 * first renewal falls due, every lease whose renewal is due within the next half of its
 * renewal interval goes along, in one {@link BatchRenewal#renewAll} call per provider
 * (one script call per Redis slot). So renewing N locks costs a few round trips per
 * renewal interval, not N, and no thread or timer exists per lock: one thread collects
 * batches and checks lease deadlines, two send the batches.
 *
 * <p>
 * The collecting thread never talks to the store, so a renewal stuck on a slow or
 * unreachable Redis cannot delay the moment a lease is declared lost. Taking and
 * releasing a lock wakes no thread unless the new task is due before the collector's next
 * planned wake-up (at most a second away). A released lease is removed at once and leaves
 * nothing behind.
 */
public final class RenewalScheduler implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(RenewalScheduler.class);

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition changed = this.lock.newCondition();

	/** Pending renewals by due time; guarded by {@link #lock}. */
	private final NavigableSet<Renewal> pending = new TreeSet<>();

	/**
	 * Pending lease deadline checks and other timed tasks by due time; guarded by
	 * {@link #lock}.
	 */
	private final NavigableSet<DeadlineCheck> deadlines = new TreeSet<>();

	/**
	 * Renewals and tasks cancelled while another thread held {@link #lock}: removed by
	 * the next thread that takes it.
	 */
	private final Queue<Object> cancelled = new ConcurrentLinkedQueue<>();

	/** Of {@link #deadlines}, the tasks that are no lease's deadline check. */
	private int otherTasks;

	/**
	 * When the collector wakes next anyway; guarded by {@link #lock}. A task due later
	 * needs no signal, so taking and releasing a lock wakes no thread.
	 */
	private long plannedWakeNanos = System.nanoTime();

	private final AtomicLong sequence = new AtomicLong();

	private final ExecutorService senders;

	private final Thread collector;

	private static final long IDLE_WAKE_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final AtomicLong batches = new AtomicLong();

	private volatile boolean closed;

	public RenewalScheduler() {
		this.senders = new ThreadPoolExecutor(2, 2, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				threads("distlock-renewal-"));
		this.collector = threads("distlock-renewal-batch-").newThread(this::collect);
		this.collector.start();
	}

	private static ThreadFactory threads(String prefix) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		};
	}

	/**
	 * Schedules one renewal of {@code lease} at {@code dueNanos} (on the monotonic
	 * clock); it may be sent up to {@code earlyNanos} sooner to share a batch.
	 */
	Renewal scheduleRenewal(ManagedLease lease, long dueNanos, long earlyNanos) {
		Renewal renewal = new Renewal(lease, dueNanos, dueNanos - earlyNanos, this.sequence.incrementAndGet());
		this.lock.lock();
		try {
			removeCancelled();
			this.pending.add(renewal);
			wakeIfSooner(renewal.dueNanos);
		}
		finally {
			this.lock.unlock();
		}
		return renewal;
	}

	/**
	 * Removes a renewal that has not been collected yet. Never waits: while another
	 * thread holds the scheduler's lock, the removal is left for whoever takes it next (a
	 * renewal collected meanwhile finds its lease no longer held), so an event loop can
	 * release a lock.
	 */
	void cancel(Renewal renewal) {
		cancelSoon(renewal);
	}

	/**
	 * Runs {@code task} on the collector thread, which never waits for the store, after
	 * {@code delayNanos}; the task must not block. For a lease's deadline check.
	 */
	DeadlineCheck scheduleDeadlineCheck(Runnable task, long delayNanos) {
		return schedule(task, delayNanos, true);
	}

	/**
	 * As {@link #scheduleDeadlineCheck}, for a task that is no lease's deadline check (a
	 * retry of a failed release): not counted by {@link #pendingDeadlineChecks()}.
	 */
	DeadlineCheck scheduleTask(Runnable task, long delayNanos) {
		return schedule(task, delayNanos, false);
	}

	private DeadlineCheck schedule(Runnable task, long delayNanos, boolean deadlineCheck) {
		DeadlineCheck check = new DeadlineCheck(task, System.nanoTime() + delayNanos, this.sequence.incrementAndGet(),
				deadlineCheck);
		this.lock.lock();
		try {
			removeCancelled();
			this.deadlines.add(check);
			if (!deadlineCheck) {
				this.otherTasks++;
			}
			wakeIfSooner(check.dueNanos);
		}
		finally {
			this.lock.unlock();
		}
		return check;
	}

	/** Removes a task that has not run yet, without waiting, as a renewal's removal. */
	void cancel(DeadlineCheck check) {
		cancelSoon(check);
	}

	private void cancelSoon(Object task) {
		if (!this.lock.tryLock()) {
			this.cancelled.add(task);
			if (!this.lock.tryLock()) {
				// Left for the next thread that takes the lock.
				return;
			}
		}
		try {
			remove(task);
			removeCancelled();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Removes the cancellations left for the lock's holder. Guarded by {@link #lock}. */
	private void removeCancelled() {
		for (Object task = this.cancelled.poll(); task != null; task = this.cancelled.poll()) {
			remove(task);
		}
	}

	/** Guarded by {@link #lock}. */
	private void remove(Object task) {
		if (task instanceof Renewal renewal) {
			this.pending.remove(renewal);
		}
		else if (task instanceof DeadlineCheck check && this.deadlines.remove(check) && !check.deadlineCheck) {
			this.otherTasks--;
		}
	}

	/** Guarded by {@link #lock}. */
	private void wakeIfSooner(long dueNanos) {
		if (dueNanos - this.plannedWakeNanos < 0) {
			this.plannedWakeNanos = dueNanos;
			this.changed.signal();
		}
	}

	/** Renewals waiting to be sent; a released lease leaves none. */
	public int pendingTasks() {
		this.lock.lock();
		try {
			removeCancelled();
			return this.pending.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Lease deadline checks waiting to run, one per held lease; a released lease leaves
	 * none.
	 */
	public int pendingDeadlineChecks() {
		this.lock.lock();
		try {
			removeCancelled();
			return this.deadlines.size() - this.otherTasks;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Batches of renewals collected so far (each is one call per provider involved). */
	public long batches() {
		return this.batches.get();
	}

	private void collect() {
		while (!this.closed) {
			List<Renewal> batch = new ArrayList<>();
			List<DeadlineCheck> expired = new ArrayList<>();
			this.lock.lock();
			try {
				removeCancelled();
				long now = System.nanoTime();
				takeDue(now, batch, expired);
				if (expired.isEmpty() && batch.isEmpty()) {
					this.plannedWakeNanos = nextWake(now);
					this.changed.awaitNanos(this.plannedWakeNanos - now);
					continue;
				}
			}
			catch (InterruptedException ex) {
				return;
			}
			finally {
				this.lock.unlock();
			}
			for (DeadlineCheck check : expired) {
				try {
					check.task.run();
				}
				catch (RuntimeException ex) {
					logger.error("Lease deadline check failed", ex);
				}
			}
			if (!batch.isEmpty()) {
				this.batches.incrementAndGet();
				send(batch);
			}
		}
	}

	/**
	 * Moves the tasks due at {@code now} to {@code expired}, and, once a renewal is due,
	 * every renewal that may go early with it to {@code batch}. Guarded by {@link #lock}.
	 */
	private void takeDue(long now, List<Renewal> batch, List<DeadlineCheck> expired) {
		while (!this.deadlines.isEmpty() && this.deadlines.first().dueNanos - now <= 0) {
			DeadlineCheck due = this.deadlines.pollFirst();
			if (!due.deadlineCheck) {
				this.otherTasks--;
			}
			expired.add(due);
		}
		if (!this.pending.isEmpty() && this.pending.first().dueNanos - now <= 0) {
			for (Iterator<Renewal> it = this.pending.iterator(); it.hasNext();) {
				Renewal renewal = it.next();
				if (renewal.earliestNanos - now <= 0) {
					batch.add(renewal);
					it.remove();
				}
			}
		}
	}

	/** When the collector wakes next with nothing due now. Guarded by {@link #lock}. */
	private long nextWake(long now) {
		long next = now + IDLE_WAKE_NANOS;
		if (!this.pending.isEmpty() && this.pending.first().dueNanos - next < 0) {
			next = this.pending.first().dueNanos;
		}
		if (!this.deadlines.isEmpty() && this.deadlines.first().dueNanos - next < 0) {
			next = this.deadlines.first().dueNanos;
		}
		return next;
	}

	private void send(List<Renewal> batch) {
		Map<LockProvider, List<ManagedLease>> byProvider = new IdentityHashMap<>();
		for (Renewal renewal : batch) {
			byProvider.computeIfAbsent(renewal.lease.provider(), (p) -> new ArrayList<>()).add(renewal.lease);
		}
		for (Map.Entry<LockProvider, List<ManagedLease>> group : byProvider.entrySet()) {
			try {
				this.senders.execute(() -> renew(group.getKey(), group.getValue()));
			}
			catch (RejectedExecutionException ex) {
				// Closed: held leases expire after their lease time.
				return;
			}
		}
	}

	private static void renew(LockProvider provider, List<ManagedLease> leases) {
		List<ManagedLease> renewing = new ArrayList<>(leases.size());
		List<LockHandle> handles = new ArrayList<>(leases.size());
		List<Duration> leaseTimes = new ArrayList<>(leases.size());
		for (ManagedLease lease : leases) {
			if (lease.beginRenewal()) {
				renewing.add(lease);
				handles.add(lease.handle());
				leaseTimes.add(lease.leaseTime());
			}
		}
		if (renewing.isEmpty()) {
			return;
		}
		long sent = System.nanoTime();
		Outcomes outcomes = new Outcomes(renewing, handles, sent);
		try {
			renewAll(provider, handles, leaseTimes, outcomes);
		}
		catch (RuntimeException ex) {
			logger.debug("Renewal of " + handles.size() + " locks failed; retrying before their deadlines", ex);
			outcomes.failUnanswered(() -> ex);
		}
		outcomes
			.failUnanswered(() -> new IllegalStateException(provider + " reported no outcome for this lock's renewal"));
	}

	/** The outcomes of one batch, each told to its lease once. */
	private static final class Outcomes implements BatchRenewal.RenewalResults {

		private final List<ManagedLease> renewing;

		private final List<LockHandle> handles;

		private final long sentNanos;

		private final boolean[] answered;

		Outcomes(List<ManagedLease> renewing, List<LockHandle> handles, long sentNanos) {
			this.renewing = renewing;
			this.handles = handles;
			this.sentNanos = sentNanos;
			this.answered = new boolean[renewing.size()];
		}

		@Override
		public void renewed(int index, boolean renewed) {
			this.answered[index] = true;
			this.renewing.get(index).renewalDone(this.sentNanos, renewed, null);
		}

		@Override
		public void failed(int index, RuntimeException failure) {
			this.answered[index] = true;
			logger.debug("Renewal of lock '" + this.handles.get(index).key() + "' failed; retrying before its deadline",
					failure);
			this.renewing.get(index).renewalDone(this.sentNanos, null, failure);
		}

		/** Fails, with {@code failure}, every lease not answered yet. */
		void failUnanswered(Supplier<RuntimeException> failure) {
			for (int i = 0; i < this.renewing.size(); i++) {
				if (!this.answered[i]) {
					this.answered[i] = true;
					this.renewing.get(i).renewalDone(this.sentNanos, null, failure.get());
				}
			}
		}

	}

	/** In one batch where the store can, else one by one. */
	private static void renewAll(LockProvider provider, List<LockHandle> handles, List<Duration> leaseTimes,
			BatchRenewal.RenewalResults results) {
		if (provider instanceof BatchRenewal batch) {
			batch.renewAll(handles, leaseTimes, results);
			return;
		}
		for (int i = 0; i < handles.size(); i++) {
			try {
				results.renewed(i, handles.get(i).renew(leaseTimes.get(i)));
			}
			catch (RuntimeException ex) {
				results.failed(i, ex);
			}
		}
	}

	/** Stops renewing; held leases then expire after their lease time. */
	@Override
	public void close() {
		this.closed = true;
		this.collector.interrupt();
		this.senders.shutdownNow();
	}

	/** One pending deadline check of one lease, or another timed task. */
	static final class DeadlineCheck implements Comparable<DeadlineCheck> {

		final Runnable task;

		final long dueNanos;

		private final long sequence;

		/** Whether it checks a lease's deadline (else it is another timed task). */
		final boolean deadlineCheck;

		DeadlineCheck(Runnable task, long dueNanos, long sequence, boolean deadlineCheck) {
			this.task = task;
			this.dueNanos = dueNanos;
			this.sequence = sequence;
			this.deadlineCheck = deadlineCheck;
		}

		@Override
		public int compareTo(DeadlineCheck other) {
			int byDue = Long.compare(this.dueNanos - other.dueNanos, 0);
			return (byDue != 0) ? byDue : Long.compare(this.sequence, other.sequence);
		}

	}

	/** One pending renewal of one lease. */
	static final class Renewal implements Comparable<Renewal> {

		final ManagedLease lease;

		final long dueNanos;

		final long earliestNanos;

		private final long sequence;

		Renewal(ManagedLease lease, long dueNanos, long earliestNanos, long sequence) {
			this.lease = lease;
			this.dueNanos = dueNanos;
			this.earliestNanos = earliestNanos;
			this.sequence = sequence;
		}

		@Override
		public int compareTo(Renewal other) {
			int byDue = Long.compare(this.dueNanos - other.dueNanos, 0);
			return (byDue != 0) ? byDue : Long.compare(this.sequence, other.sequence);
		}

	}

}
