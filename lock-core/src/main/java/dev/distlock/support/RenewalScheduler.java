package dev.distlock.support;

import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

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

	/**
	 * Pending renewals by due time. Concurrent sets and no lock: every acquire and
	 * release adds and removes tasks, and with one lock around ordered sets 16 threads on
	 * distinct keys spent a third of their time parked on it.
	 */
	private final NavigableSet<Renewal> pending = new ConcurrentSkipListSet<>();

	/** Pending lease deadline checks by due time. */
	private final NavigableSet<DeadlineCheck> deadlines = new ConcurrentSkipListSet<>();

	/**
	 * When the collector wakes next anyway. Only ever lowered by a thread that adds a
	 * task due sooner (which then unparks the collector); the collector raises it only
	 * before it looks at the sets for the last time and parks. So a task due later needs
	 * no signal, and taking and releasing a lock wakes no thread and takes no lock.
	 */
	private final AtomicLong plannedWakeNanos = new AtomicLong(System.nanoTime());

	private final AtomicLong sequence = new AtomicLong();

	private final ExecutorService senders;

	private final Thread collector;

	private static final long IDLE_WAKE_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** The longest the collector sleeps with no task due sooner. */
	private final long idleWakeNanos;

	private final AtomicLong batches = new AtomicLong();

	private volatile boolean closed;

	public RenewalScheduler() {
		this(IDLE_WAKE_NANOS);
	}

	/** For tests: a long idle sleep makes a lost wake-up show as a task far overdue. */
	RenewalScheduler(long idleWakeNanos) {
		this.idleWakeNanos = idleWakeNanos;
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
		this.pending.add(renewal);
		wakeIfSooner(renewal.dueNanos);
		return renewal;
	}

	/** Removes a renewal that has not been collected yet. */
	void cancel(Renewal renewal) {
		this.pending.remove(renewal);
	}

	/**
	 * Runs {@code task} on the collector thread, which never waits for the store, after
	 * {@code delayNanos}; the task must not block.
	 */
	DeadlineCheck scheduleDeadlineCheck(Runnable task, long delayNanos) {
		DeadlineCheck check = new DeadlineCheck(task, System.nanoTime() + delayNanos, this.sequence.incrementAndGet());
		this.deadlines.add(check);
		wakeIfSooner(check.dueNanos);
		return check;
	}

	void cancel(DeadlineCheck check) {
		this.deadlines.remove(check);
	}

	/**
	 * Called after the task is in its set (a full fence: the set's insert is a CAS).
	 * Either this reads the plan the collector is about to sleep on, lowers it and
	 * unparks the collector (a permit that its next park consumes, even if it is not
	 * parked yet), or it read an older plan, and then the collector, which looks at the
	 * sets again after writing its plan, sees the task.
	 */
	private void wakeIfSooner(long dueNanos) {
		if (lowerPlan(dueNanos)) {
			LockSupport.unpark(this.collector);
		}
	}

	/**
	 * @return whether the plan was lowered to {@code dueNanos}
	 */
	private boolean lowerPlan(long dueNanos) {
		for (;;) {
			long planned = this.plannedWakeNanos.get();
			if (dueNanos - planned >= 0) {
				return false;
			}
			if (this.plannedWakeNanos.compareAndSet(planned, dueNanos)) {
				return true;
			}
		}
	}

	/** Renewals waiting to be sent; a released lease leaves none. */
	public int pendingTasks() {
		return this.pending.size();
	}

	/**
	 * Lease deadline checks waiting to run, one per held lease; a released lease leaves
	 * none.
	 */
	public int pendingDeadlineChecks() {
		return this.deadlines.size();
	}

	/** Batches of renewals collected so far (each is one call per provider involved). */
	public long batches() {
		return this.batches.get();
	}

	private void collect() {
		while (!this.closed) {
			List<Renewal> batch = new ArrayList<>();
			List<DeadlineCheck> expired = new ArrayList<>();
			long now = System.nanoTime();
			for (DeadlineCheck check : this.deadlines) {
				if (check.dueNanos - now > 0) {
					break;
				}
				// false if cancelled meanwhile: a cancelled check never runs
				if (this.deadlines.remove(check)) {
					expired.add(check);
				}
			}
			Renewal first = first(this.pending);
			if (first != null && first.dueNanos - now <= 0) {
				for (Renewal renewal : this.pending) {
					if (renewal.earliestNanos - now <= 0 && this.pending.remove(renewal)) {
						batch.add(renewal);
					}
				}
			}
			if (expired.isEmpty() && batch.isEmpty()) {
				sleepUntilNextTask(now);
				// only close() interrupts, and the loop then ends
				Thread.interrupted();
				continue;
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
	 * Parks until the first task is due (at most {@link #idleWakeNanos} away) or a task
	 * due sooner is added. The plan is written first and the sets are read after it (with
	 * a full fence between, since the sets' reads are not volatile): an adder that read
	 * an older plan and did not unpark added its task before that read, so it is seen
	 * here.
	 */
	private void sleepUntilNextTask(long now) {
		this.plannedWakeNanos.set(now + this.idleWakeNanos);
		VarHandle.fullFence();
		Renewal renewal = first(this.pending);
		if (renewal != null) {
			lowerPlan(renewal.dueNanos);
		}
		DeadlineCheck check = first(this.deadlines);
		if (check != null) {
			lowerPlan(check.dueNanos);
		}
		long sleep = this.plannedWakeNanos.get() - System.nanoTime();
		if (sleep > 0) {
			LockSupport.parkNanos(this, sleep);
		}
	}

	private static <T> @Nullable T first(NavigableSet<T> tasks) {
		try {
			return tasks.first();
		}
		catch (NoSuchElementException ex) {
			return null;
		}
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
		boolean[] answered = new boolean[renewing.size()];
		try {
			renewAll(provider, handles, leaseTimes, new BatchRenewal.RenewalResults() {

				@Override
				public void renewed(int index, boolean renewed) {
					answered[index] = true;
					renewing.get(index).renewalDone(sent, renewed, null);
				}

				@Override
				public void failed(int index, RuntimeException failure) {
					answered[index] = true;
					logger.debug(
							"Renewal of lock '" + handles.get(index).key() + "' failed; retrying before its deadline",
							failure);
					renewing.get(index).renewalDone(sent, null, failure);
				}

			});
		}
		catch (RuntimeException ex) {
			logger.debug("Renewal of " + handles.size() + " locks failed; retrying before their deadlines", ex);
			for (int i = 0; i < renewing.size(); i++) {
				if (!answered[i]) {
					answered[i] = true;
					renewing.get(i).renewalDone(sent, null, ex);
				}
			}
		}
		for (int i = 0; i < renewing.size(); i++) {
			if (!answered[i]) {
				renewing.get(i)
					.renewalDone(sent, null,
							new IllegalStateException(provider + " reported no outcome for this lock's renewal"));
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

	/** One pending deadline check of one lease. */
	static final class DeadlineCheck implements Comparable<DeadlineCheck> {

		final Runnable task;

		final long dueNanos;

		private final long sequence;

		DeadlineCheck(Runnable task, long dueNanos, long sequence) {
			this.task = task;
			this.dueNanos = dueNanos;
			this.sequence = sequence;
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
