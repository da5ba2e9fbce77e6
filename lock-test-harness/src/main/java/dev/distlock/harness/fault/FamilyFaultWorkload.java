package dev.distlock.harness.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.DistributedLatch;
import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.fault.FamilyOp.Kind;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import org.jspecify.annotations.Nullable;

/**
 * The workload of a cross-JVM family fault run ({@link FamilyFaultRun}), alike in every
 * JVM and all at once on one template: threads on the read and write sides of one key
 * (three reads for each write), threads on a semaphore of {@link #PERMITS} permits,
 * threads taking overlapping sets of 2 or 3 of {@link #MULTI_KEYS} keys (and plain locks
 * on single keys), and a thread running latch rounds with the other JVM. Writers and
 * multi-key holders do a fenced read-increment-write on the {@link FencedResource} for
 * each key they hold, as the mutex's workload does. Every hold, failed acquire and latch
 * event is a {@link FamilyOp}; the threads never stop on an error, so a fault shows in
 * the events.
 *
 * <p>
 * Latch rounds: round {@code r} lasts from {@code r * 600 ms} to {@code (r + 1) * 600 ms}
 * on {@link System#nanoTime()} (one clock for every JVM of a Linux host) and uses the
 * latch {@code famfault-latch:r} of count 3. Participant 0 is in the test JVM,
 * participant 1 in the worker JVM, and in even rounds participant 2 in one of them
 * (alternating); odd rounds have only two participants, so their latch must stay shut.
 * Each participant counts down twice (a retry), each JVM's thread then awaits the latch
 * until its round ends.
 */
public final class FamilyFaultWorkload implements AutoCloseable {

	/** The semaphore's permits. */
	public static final int PERMITS = 3;

	/** How many keys the multi-key locks draw from. */
	public static final int MULTI_KEYS = 4;

	/** The latch's count. */
	public static final int LATCH_COUNT = 3;

	/**
	 * Setting, optional: the longest a permit holder stays inside, in milliseconds (2 by
	 * default). A store whose calls take tens of milliseconds sets more, so that permit
	 * holders of a short run still meet inside, as the report requires.
	 */
	public static final String PERMIT_HOLD_MILLIS = "famfault.permit-hold-millis";

	/** The read-write lock's key, and the resource's key for its writers. */
	public static final String RW_KEY = "famfault-rw";

	private static final String SEMAPHORE_KEY = "famfault-sem";

	/**
	 * How long a latch round lasts; rounds start on the monotonic clock that both JVMs
	 * share, so that a JVM paused or started late joins the round the other one is in.
	 */
	private static final Duration LATCH_ROUND = Duration.ofMillis(600);

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final ProviderFactory store;

	private final LockProvider provider;

	private final DefaultLockTemplate template;

	private final FencedResource resource;

	private final Duration lease;

	private final int jvm;

	private final @Nullable Writer history;

	/** The longest a permit holder stays inside, in nanoseconds. */
	private final int permitHoldNanos;

	private final Set<String> lost = ConcurrentHashMap.newKeySet();

	private final List<FamilyOp> ops = Collections.synchronizedList(new ArrayList<>());

	private final Map<String, Long> errors = new ConcurrentHashMap<>();

	private final List<Thread> threads = new ArrayList<>();

	/**
	 * A workload over the provider {@code store} creates from {@code settings}, once it
	 * answers; closing the workload closes {@code store}.
	 * @param jvm 0 in the test JVM, 1 in the worker JVM
	 * @param history where each event is written as it happens (the worker JVM's, so that
	 * a killed worker leaves what it did), or null
	 */
	public FamilyFaultWorkload(int jvm, ProviderFactory store, Map<String, String> settings, FencedResource resource,
			Duration lease, @Nullable Writer history) {
		this.jvm = jvm;
		this.store = store;
		this.resource = resource;
		this.lease = lease;
		this.history = history;
		this.permitHoldNanos = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
				Long.parseLong(settings.getOrDefault(PERMIT_HOLD_MILLIS, "2")) * 1_000_000L));
		this.provider = store.create(settings);
		ProviderFactory.awaitAnswers(this.provider, Duration.ofSeconds(30));
		LockOptions defaults = LockOptions.builder()
			.waitTime(Workload.waitTime(lease))
			.leaseTime(lease)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
		LeaseLossListener listener = (held, reason, holder) -> this.lost.add(held.key() + "#" + held.fencingToken());
		boolean handover = Boolean.parseBoolean(settings.get(FaultRun.HANDOVER));
		this.template = new DefaultLockTemplate(this.provider, this.scheduler, defaults, listener, false,
				LockObserver.NONE, handover ? HandoverSettings.ON : HandoverSettings.DEFAULTS);
	}

	/** The key of multi-key index {@code index}, and the resource's key for it. */
	public static String multiKey(int index) {
		return "famfault-multi:" + index;
	}

	/**
	 * Starts {@code threads} threads of each kind (read-write, semaphore, multi-key) and
	 * the latch rounds, working until {@code endNanos}.
	 */
	public void start(int threads, long endNanos, long seed) {
		for (int i = 0; i < threads; i++) {
			Random rw = new Random(seed * 31 + i);
			Random sem = new Random(seed * 37 + i);
			Random multi = new Random(seed * 41 + i);
			startThread("rw-" + i, endNanos, () -> readWrite(rw));
			startThread("sem-" + i, endNanos, () -> permit(sem));
			startThread("multi-" + i, endNanos, () -> multi(multi));
		}
		Thread latches = new Thread(() -> latchRounds(endNanos), "famfault-latch-" + this.jvm);
		this.threads.add(latches);
		latches.start();
	}

	private void startThread(String name, long endNanos, Runnable once) {
		Thread thread = new Thread(() -> {
			while (System.nanoTime() - endNanos < 0) {
				once.run();
				Thread.interrupted();
			}
		}, "famfault-" + name + "-" + this.jvm);
		this.threads.add(thread);
		thread.start();
	}

	/** The threads, for faults that interrupt them. */
	public List<Thread> threads() {
		return this.threads;
	}

	/** Waits for the threads to finish; an error naming a thread that did not. */
	public void join(Duration timeout) throws InterruptedException {
		Workload.join(this.threads, timeout);
	}

	/** The events recorded so far. */
	public List<FamilyOp> ops() {
		synchronized (this.ops) {
			return List.copyOf(this.ops);
		}
	}

	/** Unexpected exceptions by message, with their counts: a bug. */
	public Map<String, Long> errors() {
		return Map.copyOf(this.errors);
	}

	/**
	 * What this JVM still holds after its threads finished; see {@link Workload#leaks()}.
	 */
	public Workload.Leaks leaks() {
		return new Workload.Leaks(this.template.heldLocks(), this.template.queuedKeys(), this.scheduler.pendingTasks(),
				this.scheduler.pendingDeadlineChecks(), this.store.leftOver());
	}

	private void readWrite(Random random) {
		boolean write = random.nextInt(4) == 0;
		LockOptions.Builder options = LockOptions.builder();
		if (!write) {
			options.mode(LockMode.READ);
		}
		Kind kind = write ? Kind.WRITE : Kind.READ;
		Lease lease = acquire(kind, 0, () -> this.template.acquire(RW_KEY, options.build()));
		if (lease == null) {
			return;
		}
		long acquired = System.nanoTime();
		int fence = write ? fencedIncrement(RW_KEY, lease.fencingToken(), random) : work(random);
		long released = System.nanoTime();
		String outcome = release(lease);
		boolean told = !"ok".equals(outcome) && !"backend".equals(outcome) || lostKey(RW_KEY, lease.fencingToken());
		record(new FamilyOp(this.jvm, kind, 0, lease.fencingToken(), acquired, released, told, fence, outcome));
	}

	private void permit(Random random) {
		Lease lease = acquire(Kind.PERMIT, 0,
				() -> this.template.acquire(SEMAPHORE_KEY, LockOptions.builder().permits(PERMITS).build()));
		if (lease == null) {
			return;
		}
		long acquired = System.nanoTime();
		LockSupport.parkNanos(random.nextInt(this.permitHoldNanos));
		long released = System.nanoTime();
		String outcome = release(lease);
		boolean told = !"ok".equals(outcome) && !"backend".equals(outcome)
				|| lostKey(SEMAPHORE_KEY, lease.fencingToken());
		record(new FamilyOp(this.jvm, Kind.PERMIT, 0, lease.fencingToken(), acquired, released, told, 0, outcome));
	}

	private void multi(Random random) {
		List<Integer> keys = new ArrayList<>();
		int size = (random.nextInt(4) == 0) ? 1 : 2 + random.nextInt(2);
		while (keys.size() < size) {
			int key = random.nextInt(MULTI_KEYS);
			if (!keys.contains(key)) {
				keys.add(key);
			}
		}
		Kind kind = (size == 1) ? Kind.PLAIN : Kind.MULTI;
		Lease lease = acquire(kind, keys.get(0),
				() -> (size == 1) ? this.template.acquire(multiKey(keys.get(0)), LockOptions.defaults()) : this.template
					.acquireAll(keys.stream().map(FamilyFaultWorkload::multiKey).toList(), LockOptions.defaults()));
		if (lease == null) {
			return;
		}
		long acquired = System.nanoTime();
		long[] tokens = new long[size];
		int[] fences = new int[size];
		for (int i = 0; i < size; i++) {
			String key = multiKey(keys.get(i));
			tokens[i] = (lease instanceof MultiLease all) ? all.fencingToken(key) : lease.fencingToken();
			fences[i] = fencedIncrement(key, tokens[i], random);
		}
		long released = System.nanoTime();
		String outcome = release(lease);
		for (int i = 0; i < size; i++) {
			boolean told = !"ok".equals(outcome) && !"backend".equals(outcome)
					|| lostKey(multiKey(keys.get(i)), tokens[i]);
			record(new FamilyOp(this.jvm, kind, keys.get(i), tokens[i], acquired, released, told, fences[i], outcome));
		}
	}

	private boolean lostKey(String key, long token) {
		return this.lost.contains(key + "#" + token);
	}

	/** The acquire, or null with the failure recorded. */
	private @Nullable Lease acquire(Kind kind, int key, java.util.function.Supplier<? extends Lease> acquire) {
		String outcome;
		try {
			return acquire.get();
		}
		catch (LockAcquisitionException ex) {
			outcome = (Thread.currentThread().isInterrupted() || String.valueOf(ex.getMessage()).contains("nterrupt"))
					? "interrupted" : "timeout";
		}
		catch (LockBackendException ex) {
			outcome = "backend";
		}
		catch (RuntimeException ex) {
			error("acquire " + kind, ex);
			outcome = "error";
		}
		record(new FamilyOp(this.jvm, kind, key, 0, 0, 0, false, 0, outcome));
		return null;
	}

	/**
	 * Releases; {@code ok}, {@code lost} (told at release), {@code backend},
	 * {@code error}.
	 */
	private String release(Lease lease) {
		boolean held = lease.isHeld();
		try {
			lease.release();
			return held ? "ok" : "lost";
		}
		catch (LeaseLostException ex) {
			return "lost";
		}
		catch (LockBackendException ex) {
			// The holder could not tell: its hold is not excused.
			return "backend";
		}
		catch (RuntimeException ex) {
			error("release", ex);
			return "error";
		}
	}

	/**
	 * The fenced read-increment-write of the mutex's workload, shielded from interrupts
	 * (which are for the lock library): 1 accepted, 2 refused or rejected.
	 */
	private int fencedIncrement(String key, long token, Random random) {
		boolean interrupted = Thread.interrupted();
		try {
			FencedResource.Entry entry = this.resource.enter(key, token);
			try {
				if (!entry.admitted()) {
					return 2;
				}
				work(random);
				return this.resource.write(key, token, entry.value() + 1) ? 1 : 2;
			}
			finally {
				this.resource.exit(key);
			}
		}
		finally {
			if (interrupted || Thread.interrupted()) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** A short pause inside, up to 2 ms. */
	private static int work(Random random) {
		LockSupport.parkNanos(random.nextInt(2_000_000));
		return 0;
	}

	private void latchRounds(long endNanos) {
		long roundNanos = LATCH_ROUND.toNanos();
		long last = Long.MIN_VALUE;
		while (System.nanoTime() - endNanos < 0) {
			Thread.interrupted();
			long now = System.nanoTime();
			long round = Math.floorDiv(now, roundNanos);
			if (round <= last) {
				// The schedule: the next round starts on the shared clock.
				LockSupport.parkNanos((round + 1) * roundNanos - now);
				continue;
			}
			last = round;
			latchRound((int) round, (round + 1) * roundNanos, endNanos);
		}
	}

	private void latchRound(int round, long roundEnd, long endNanos) {
		boolean full = round % 2 == 0;
		List<Integer> mine = new ArrayList<>();
		mine.add(this.jvm);
		if (full && (round / 2) % 2 == this.jvm) {
			mine.add(2);
		}
		DistributedLatch latch = joinLatch("famfault-latch:" + round, round, endNanos);
		if (latch == null) {
			return;
		}
		for (int participant : mine) {
			record(new FamilyOp(this.jvm, Kind.LATCH_CALL, round, participant, System.nanoTime(), 0, false, 0, "call"));
			countDown(latch, participant);
			countDown(latch, participant);
		}
		String outcome;
		long opened = 0;
		try {
			long left = Math.max(1_000_000L, roundEnd - System.nanoTime() - 50_000_000L);
			if (latch.await(Duration.ofNanos(left))) {
				opened = System.nanoTime();
				outcome = "open";
			}
			else {
				outcome = "shut";
			}
		}
		catch (InterruptedException ex) {
			outcome = "interrupted";
		}
		catch (LockBackendException ex) {
			outcome = "backend";
		}
		catch (IllegalStateException ex) {
			// re-armed or expired (a store that lost it): the round is over
			outcome = "gone";
		}
		catch (RuntimeException ex) {
			error("await", ex);
			outcome = "error";
		}
		record(new FamilyOp(this.jvm, Kind.LATCH_AWAIT, round, 0, opened, 0, false, 0, outcome));
	}

	private @Nullable DistributedLatch joinLatch(String key, int round, long endNanos) {
		long deadline = System.nanoTime() + this.lease.multipliedBy(2).toNanos();
		while (System.nanoTime() - deadline < 0 && System.nanoTime() - endNanos < 0) {
			try {
				// Expiry: two leases after the last change, so that a run's latches are
				// gone soon after it.
				return this.template.latch(key, LATCH_COUNT, this.lease.multipliedBy(2));
			}
			catch (LockBackendException ex) {
				Thread.interrupted();
				LockSupport.parkNanos(50_000_000L);
			}
			catch (RuntimeException ex) {
				error("latch", ex);
				break;
			}
		}
		record(new FamilyOp(this.jvm, Kind.LATCH_AWAIT, round, 0, 0, 0, false, 0, "not-joined"));
		return null;
	}

	/** A count-down, retried while the store fails (a retry whose reply was lost). */
	private void countDown(DistributedLatch latch, int participant) {
		long deadline = System.nanoTime() + this.lease.multipliedBy(2).toNanos();
		while (System.nanoTime() - deadline < 0) {
			try {
				latch.countDown("participant-" + participant);
				return;
			}
			catch (LockBackendException ex) {
				Thread.interrupted();
				LockSupport.parkNanos(50_000_000L);
			}
			catch (RuntimeException ex) {
				error("count-down", ex);
				return;
			}
		}
	}

	private void record(FamilyOp op) {
		this.ops.add(op);
		writeLine(op.line());
	}

	private void error(String step, RuntimeException ex) {
		String message = step + ": " + ex;
		this.errors.merge(message, 1L, Long::sum);
		writeLine("E " + message.replace('\n', ' '));
	}

	private void writeLine(String line) {
		if (this.history == null) {
			return;
		}
		synchronized (this.history) {
			try {
				this.history.write(line);
				this.history.write('\n');
				this.history.flush();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	@Override
	public void close() {
		this.template.close();
		this.scheduler.close();
		this.store.close();
	}

}
